// The window survives its engine: each open model's engine runs in its own process
// (onnxlens-engine-worker), so an abort there while running, benchmarking or sweeping ends with an
// error on that model's tab, the other tab still runs, the window stays, and the next Run starts
// the engine process again. The crash is the worker's test hook (ONNXLENS_ENGINE_WORKER_CRASH_ON),
// read when the worker starts: only the tab opened while it is set gets it.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/panels/SweepTab.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

QString sampleModel(const char* name) {
    return QString::fromUtf8(ONNXLENS_SOURCE_DIR) + "/resources/samples/" + name + "/model.onnx";
}

class EngineProcessGuiTest : public ::testing::Test {
  protected:
    void SetUp() override { testing::clearSettings(); }
    void TearDown() override {
        qunsetenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
        testing::clearSettings();
    }

    // Opens `path` with the crash hook set to `crashOn` while its engine process starts.
    widgets::GraphPage* openWithHook(gui::MainWindow& window, const char* model,
                                     const char* crashOn) {
        qputenv("ONNXLENS_ENGINE_WORKER_CRASH_ON", crashOn);
        widgets::GraphPage* page = testing::openAndDraw(window, sampleModel(model));
        if (page) testing::waitFor([&] { return page->controller()->isReady(); }, 60000);
        qunsetenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
        return page;
    }
};

TEST_F(EngineProcessGuiTest, AnAbortDuringRunFailsThatTabOnlyAndRunAgainRestartsTheEngine) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* other = testing::openAndDraw(window, sampleModel("legacy_opset10"));
    ASSERT_NE(other, nullptr);
    ASSERT_TRUE(testing::waitFor([&] { return other->controller()->isReady(); }, 60000));
    widgets::GraphPage* page = openWithHook(window, "mnist_cnn", "run");
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(page->controller()->isReady());
    EXPECT_EQ(page->controller()->sessionsCompiled(), 1);

    widgets::RunPanel* run = window.runPanel();
    ASSERT_EQ(run->controller(), page->controller());
    QSignalSpy failed(run, &widgets::RunPanel::runFailed);
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1 && !run->isBusy(); }, 60000));
    const QString message = failed.at(0).at(0).toString();
    EXPECT_TRUE(
        message.contains(QStringLiteral("The engine process stopped (signal 6, SIGABRT) "
                                        "while running model.onnx")))
        << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("the other tabs are unaffected")));
    EXPECT_TRUE(message.contains(QStringLiteral("Run again restarts it.")));
    EXPECT_TRUE(run->statusText().contains(QStringLiteral("SIGABRT")))
        << run->statusText().toStdString();
    EXPECT_EQ(ran.count(), 0);

    // The window and the other tab are there, and the other model still runs.
    ASSERT_EQ(window.pageCount(), 2);
    window.openFile(sampleModel("legacy_opset10"));
    ASSERT_TRUE(testing::waitFor([&] { return window.currentPage() == other; }));
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady() && !run->isBusy(); }, 60000));
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 1 && !run->isBusy(); }, 60000))
        << run->statusText().toStdString();
    EXPECT_EQ(other->controller()->sessionsCompiled(), 1);

    // Back in the first tab, Run again starts its engine process (compiling the model again)
    // without the hook, and runs.
    window.openFile(sampleModel("mnist_cnn"));
    ASSERT_TRUE(testing::waitFor([&] { return window.currentPage() == page; }));
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 2 && !run->isBusy(); }, 60000))
        << run->statusText().toStdString();
    ASSERT_TRUE(page->controller()->lastRun());
    EXPECT_EQ(page->controller()->lastRun()->outputs.size(), 1u);
    EXPECT_EQ(page->controller()->sessionsCompiled(), 2);
    EXPECT_EQ(failed.count(), 1);
}

TEST_F(EngineProcessGuiTest, AnAbortDuringABenchmarkIsAnErrorOnTheBenchmarkDock) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = openWithHook(window, "mnist_cnn", "benchmark");
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(page->controller()->isReady());
    widgets::BenchmarkPanel* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(0);
    bench->runsSpin()->setValue(3);
    bench->threadsSpin()->setValue(0);
    bench->profileCheck()->setChecked(false);
    QSignalSpy failed(bench, &widgets::BenchmarkPanel::failed);
    QSignalSpy finished(bench, &widgets::BenchmarkPanel::finished);
    bench->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }, 60000));
    const QString message = failed.at(0).at(0).toString();
    EXPECT_TRUE(message.contains(QStringLiteral("SIGABRT"))) << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("while benchmarking model.onnx")))
        << message.toStdString();
    EXPECT_FALSE(bench->isRunning());

    bench->start();  // a new engine process, without the hook
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000))
        << bench->statusText().toStdString();
    ASSERT_TRUE(page->controller()->lastBenchmark());
    EXPECT_EQ(page->controller()->lastBenchmark()->statistics.runs, 3);
}

// A crash while compiling (what a hostile model did to the whole window) is the tab's compile
// error; the other tab stays and runs.
TEST_F(EngineProcessGuiTest, AnAbortWhileCompilingIsThatTabsCompileError) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* other = testing::openAndDraw(window, sampleModel("legacy_opset10"));
    ASSERT_NE(other, nullptr);
    ASSERT_TRUE(testing::waitFor([&] { return other->controller()->isReady(); }, 60000));
    qputenv("ONNXLENS_ENGINE_WORKER_CRASH_ON", "compile");
    widgets::GraphPage* page = testing::openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(
        testing::waitFor([&] { return !page->controller()->compileError().isEmpty(); }, 60000));
    qunsetenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
    const QString message = page->controller()->compileError();
    EXPECT_TRUE(message.contains(QStringLiteral(
        "The engine process stopped (signal 6, SIGABRT) while compiling model.onnx")))
        << message.toStdString();
    widgets::RunPanel* run = window.runPanel();
    EXPECT_TRUE(run->statusText().contains(QStringLiteral("SIGABRT")))
        << run->statusText().toStdString();
    EXPECT_FALSE(run->isReady());

    ASSERT_EQ(window.pageCount(), 2);
    window.openFile(sampleModel("legacy_opset10"));
    ASSERT_TRUE(testing::waitFor([&] { return window.currentPage() == other; }));
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 1 && !run->isBusy(); }, 60000))
        << run->statusText().toStdString();
}

// Cancel reaches a run between two nodes (SIGUSR1 with the job's number); an engine process that
// does not stop (here it hangs with the signal blocked) is ended 5 s later, the run is reported
// cancelled, and the next Run starts a new process.
TEST_F(EngineProcessGuiTest, AnEngineProcessThatIgnoresCancelIsEndedAndRestarted) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = openWithHook(window, "mnist_cnn", "run-hang");
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(page->controller()->isReady());
    widgets::RunPanel* run = window.runPanel();
    QSignalSpy cancelled(run, &widgets::RunPanel::runCancelled);
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return run->isBusy(); }));
    QTest::qWait(300);  // the request is in the hanging process
    run->cancel();
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1 && !run->isBusy(); }, 20000))
        << run->statusText().toStdString();
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 1 && !run->isBusy(); }, 60000))
        << run->statusText().toStdString();
    EXPECT_EQ(page->controller()->sessionsCompiled(), 2);
}

// The shape sweep compiles the model in an engine process of its own: its crash is an error on
// the sweep, and the tab's own session (the Run dock's) is untouched.
TEST_F(EngineProcessGuiTest, AnAbortDuringAShapeSweepIsAnErrorOnTheSweep) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = testing::openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(testing::waitFor([&] { return page->controller()->isReady(); }, 60000));
    widgets::BenchmarkPanel* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(0);
    bench->runsSpin()->setValue(2);
    bench->threadsSpin()->setValue(1);
    widgets::SweepTab* sweep = bench->sweepTab();
    sweep->axesEdit()->setText(QStringLiteral("batch=1,2"));
    QSignalSpy failed(sweep, &widgets::SweepTab::failed);
    QSignalSpy finished(sweep, &widgets::SweepTab::finished);
    qputenv("ONNXLENS_ENGINE_WORKER_CRASH_ON", "sweep");
    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }, 60000))
        << sweep->statusText().toStdString();
    qunsetenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
    const QString message = failed.at(0).at(0).toString();
    EXPECT_TRUE(message.contains(QStringLiteral("SIGABRT) while sweeping model.onnx")))
        << message.toStdString();
    EXPECT_FALSE(sweep->isRunning());
    EXPECT_EQ(window.pageCount(), 1);
    EXPECT_TRUE(page->controller()->isReady());

    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000))
        << sweep->statusText().toStdString();
    EXPECT_EQ(sweep->points().size(), 2u);
    EXPECT_EQ(page->controller()->sessionsCompiled(), 1);
}

#if !defined(__SANITIZE_ADDRESS__)
// A run that allocates without end (the hook allocates 1 GiB blocks until it cannot) fails within
// the engine process's address-space limit: an error on the tab, the process and its session stay.
TEST_F(EngineProcessGuiTest, ARunawayAllocationStopsAtTheEngineProcessLimit) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = openWithHook(window, "mnist_cnn", "run-alloc");
    ASSERT_NE(page, nullptr);
    ASSERT_TRUE(page->controller()->isReady());
    widgets::RunPanel* run = window.runPanel();
    QSignalSpy failed(run, &widgets::RunPanel::runFailed);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1 && !run->isBusy(); }, 60000));
    const QString message = failed.at(0).at(0).toString();
    EXPECT_TRUE(message.contains(QStringLiteral("ran out of memory"))) << message.toStdString();
    EXPECT_EQ(page->controller()->sessionsCompiled(), 1);
    EXPECT_EQ(window.pageCount(), 1);
}
#endif

}  // namespace
}  // namespace onnxlens
