// The Benchmark dock's numbers beside `onnxlens-cli bench`: a measurement, not an assertion
// (speed targets are measured in bench/, never asserted in unit tests). Runs only when
// ONNXLENS_PARITY_MODEL names a model; the dock benchmarks it at 1 intra-op thread with
// ONNXLENS_PARITY_RUNS counted runs (default 100) after 10 warm-up runs and prints the median,
// to be read beside
//   onnxlens-cli bench MODEL --threads 1 --warmup 10 --runs 100
// on the same idle machine (bench/README.md).
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <cstdio>
#include <cstdlib>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"

namespace onnxlens {
namespace {

TEST(WindowBenchmarkParity, OneThreadMedianOfTheBenchmarkDock) {
    const char* model = std::getenv("ONNXLENS_PARITY_MODEL");
    if (!model) GTEST_SKIP() << "set ONNXLENS_PARITY_MODEL to a model file to measure";
    const char* runsText = std::getenv("ONNXLENS_PARITY_RUNS");
    const int runs = runsText ? std::atoi(runsText) : 100;
    QCoreApplication::setApplicationName(QCoreApplication::applicationName() + "-parity");
    testing::clearSettings();
    gui::MainWindow window;
    window.show();
    ASSERT_NE(testing::openAndDraw(window, QString::fromUtf8(model)), nullptr);
    auto* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(10);
    bench->runsSpin()->setValue(runs);
    bench->threadsSpin()->setValue(1);
    bench->profileCheck()->setChecked(false);
    QSignalSpy finished(bench, &widgets::BenchmarkPanel::finished);
    bench->start();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 600000))
        << bench->statusText().toStdString();
    const auto& s = bench->result()->statistics;
    std::printf(
        "[ measured ] Benchmark dock, 1 thread, %d runs: min %.3f ms, median %.3f ms, "
        "mean %.3f ms, P90 %.3f ms\n",
        s.runs, s.minMs, s.medianMs, s.meanMs, s.p90Ms);
    testing::clearSettings();
}

}  // namespace
}  // namespace onnxlens
