// Peak memory of the window with one large model open, run once in the Run dock and benchmarked
// once, and of the model's engine process (onnxlens-engine-worker, which holds the session): a
// measurement, not an assertion (bench/README.md). Runs only when ONNXLENS_MEMORY_MODEL
// names a model, e.g. the BERT-base export of bench/make_bert_base.py:
//   ONNXLENS_MEMORY_MODEL=/path/model.onnx QT_QPA_PLATFORM=offscreen
//     build/release/tests/widgets/widgets_tests --gtest_filter=WindowMemory.*
#include <gtest/gtest.h>
#include <unistd.h>

#include <QCheckBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/RunPanel.h"

namespace onnxlens {
namespace {

// A line of /proc/PROCESS/status ("VmHWM:  123456 kB") as megabytes.
double statusMegabytes(const std::string& field, const std::string& process = "self") {
    std::ifstream status("/proc/" + process + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field + ":", 0) == 0)
            return std::stod(line.substr(field.size() + 1)) / 1024.0;
    return -1;
}

// The peak memory of this process's engine worker (its child named onnxlens-engine-worker; the
// status file's Name is cut to 15 characters).
double engineProcessPeakMegabytes() {
    const std::string parent = "PPid:\t" + std::to_string(getpid());
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream status(entry.path() / "status");
        std::string line, name;
        bool child = false;
        while (std::getline(status, line)) {
            if (line.rfind("Name:", 0) == 0) name = line;
            if (line == parent) child = true;
        }
        if (child && name.find("onnxlens-engine") != std::string::npos)
            return statusMegabytes("VmHWM", entry.path().filename().string());
    }
    return -1;
}

TEST(WindowMemory, OpenRunAndBenchmarkOneModel) {
    const char* model = std::getenv("ONNXLENS_MEMORY_MODEL");
    if (!model) GTEST_SKIP() << "set ONNXLENS_MEMORY_MODEL to a model file to measure";
    QCoreApplication::setApplicationName(QCoreApplication::applicationName() + "-memory");
    testing::clearSettings();
    gui::MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, QString::fromUtf8(model));
    ASSERT_NE(page, nullptr);
    std::printf("after open: VmHWM %.0f MB, VmRSS %.0f MB\n", statusMegabytes("VmHWM"),
                statusMegabytes("VmRSS"));

    auto* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady() && !run->isBusy(); }, 300000));
    QSignalSpy finished(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1 && !run->isBusy(); }, 300000));
    std::printf("after run: VmHWM %.0f MB, VmRSS %.0f MB; engine process VmHWM %.0f MB\n",
                statusMegabytes("VmHWM"), statusMegabytes("VmRSS"), engineProcessPeakMegabytes());

    auto* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(0);
    bench->runsSpin()->setValue(1);
    bench->threadsSpin()->setValue(1);
    bench->profileCheck()->setChecked(false);
    QSignalSpy benchmarked(bench, &widgets::BenchmarkPanel::finished);
    bench->startAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return benchmarked.count() == 1; }, 300000));
    std::printf("after benchmark: VmHWM %.0f MB, VmRSS %.0f MB; engine process VmHWM %.0f MB\n",
                statusMegabytes("VmHWM"), statusMegabytes("VmRSS"), engineProcessPeakMegabytes());
    testing::clearSettings();
}

}  // namespace
}  // namespace onnxlens
