// The Benchmark dock's numbers beside `onnxlens-cli bench`: a measurement, not an assertion
// (speed targets are measured in bench/, never asserted in unit tests). Runs only when
// ONNXLENS_PARITY_MODEL names a model; the dock benchmarks it at 1 intra-op thread with
// ONNXLENS_PARITY_RUNS counted runs (default 100) after 10 warm-up runs and prints the median,
// to be read beside
//   onnxlens-cli bench MODEL --threads 1 --warmup 10 --runs 100
// on the same idle machine (bench/README.md). The Run dock's measurement runs the model
// ONNXLENS_PARITY_RUNS times (default 20) and prints the median engine time of a run and the
// median time from Run to the outputs shown (feeds, the engine process's round trip, statistics).
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSpinBox>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

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

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

TEST(WindowBenchmarkParity, RunDockLatency) {
    const char* model = std::getenv("ONNXLENS_PARITY_MODEL");
    if (!model) GTEST_SKIP() << "set ONNXLENS_PARITY_MODEL to a model file to measure";
    const char* runsText = std::getenv("ONNXLENS_PARITY_RUNS");
    const int runs = runsText ? std::atoi(runsText) : 20;
    QCoreApplication::setApplicationName(QCoreApplication::applicationName() + "-parity");
    testing::clearSettings();
    gui::MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, QString::fromUtf8(model));
    ASSERT_NE(page, nullptr);
    auto* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady() && !run->isBusy(); }, 600000));
    QSignalSpy finished(run, &widgets::RunPanel::runFinished);
    std::vector<double> engineMs, roundTripMs;
    QElapsedTimer clock;
    double shownMs = 0;  // when the dock had the outputs
    QObject::connect(run, &widgets::RunPanel::runFinished, run,
                     [&] { shownMs = static_cast<double>(clock.nsecsElapsed()) / 1e6; });
    for (int i = 0; i < runs + 1; ++i) {  // the first run (weight reorders) is not counted
        clock.start();
        run->run();
        ASSERT_TRUE(
            testing::waitFor([&] { return finished.count() == i + 1 && !run->isBusy(); }, 600000))
            << run->statusText().toStdString();
        if (i == 0) continue;
        roundTripMs.push_back(shownMs);
        engineMs.push_back(page->controller()->lastRun()->runMs);
    }
    std::printf(
        "[ measured ] Run dock, %d runs: median run %.3f ms, median Run-to-outputs %.3f ms\n", runs,
        median(engineMs), median(roundTripMs));
    testing::clearSettings();
}

}  // namespace
}  // namespace onnxlens
