// One session per open model: the tab's ModelController compiles once, and the Run dock, the
// Compare dock (its test data set), the Benchmark dock and View > Show Optimized Graph all use
// that session; switching tabs neither recompiles nor loses a tab's inputs or results.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "SyntheticModels.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ComparePanel.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

using widgets::EngineJob;
using widgets::ModelController;

QString sampleModel(const char* name) {
    return QString::fromUtf8(ONNXLENS_SOURCE_DIR) + "/resources/samples/" + name + "/model.onnx";
}

class ModelControllerTest : public ::testing::Test {
  protected:
    void SetUp() override { testing::clearSettings(); }
    void TearDown() override { testing::clearSettings(); }
};

TEST_F(ModelControllerTest, OneSessionServesRunCompareBenchmarkAndTheOptimizedView) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = testing::openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    ModelController* controller = page->controller();
    widgets::RunPanel* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady() && !run->isBusy(); }, 60000));
    EXPECT_EQ(controller->sessionsCompiled(), 1);

    // Run: the Run dock's input choices reach the controller.
    widgets::InputSource ones;
    ones.kind = widgets::InputSource::Kind::Ones;
    run->setInputSource(QStringLiteral("image"), ones);
    ASSERT_TRUE(controller->inputChoices());
    EXPECT_EQ(controller->inputChoices()->sources.at("image").kind,
              widgets::InputSource::Kind::Ones);
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(testing::waitFor([&] { return ran.count() == 1 && !run->isBusy(); }, 60000));
    ASSERT_TRUE(controller->lastRun());
    EXPECT_EQ(controller->lastRun()->feedShapes.at("image"), (engine::Shape{1, 1, 28, 28}));

    // Compare against the test data set beside the model.
    widgets::ComparePanel* compare = window.comparePanel();
    QSignalSpy compared(compare, &widgets::ComparePanel::compareFinished);
    compare->chooseDataSet(0);
    compare->compare();
    ASSERT_TRUE(testing::waitFor([&] { return compared.count() == 1; }, 60000));
    ASSERT_TRUE(compare->lastComparison());
    EXPECT_TRUE(compare->lastComparison()->passed()) << compare->summaryText().toStdString();

    // Benchmark with the session's own options (every core, optimized).
    widgets::BenchmarkPanel* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(0);
    bench->runsSpin()->setValue(2);
    bench->threadsSpin()->setValue(0);
    bench->profileCheck()->setChecked(false);
    QSignalSpy benchmarked(bench, &widgets::BenchmarkPanel::finished);
    bench->start();
    ASSERT_TRUE(testing::waitFor([&] { return benchmarked.count() == 1; }, 60000))
        << bench->statusText().toStdString();
    ASSERT_TRUE(controller->lastBenchmark());
    EXPECT_EQ(controller->lastBenchmark()->statistics.runs, 2);

    // The optimized view: the same session's optimized model.
    window.showOptimizedAction()->setChecked(true);
    ASSERT_TRUE(testing::waitFor([&] { return page->optimizedGraph() != nullptr; }, 60000));
    EXPECT_EQ(controller->sessionsCompiled(), 1);

    // A second tab compiles its own session; coming back recompiles nothing and shows the first
    // tab's inputs and last run again.
    widgets::GraphPage* second = testing::openAndDraw(window, sampleModel("legacy_opset10"));
    ASSERT_NE(second, nullptr);
    ASSERT_TRUE(testing::waitFor([&] { return second->controller()->isReady(); }, 60000));
    EXPECT_EQ(second->controller()->sessionsCompiled(), 1);
    EXPECT_FALSE(run->lastOutcome());
    window.openFile(sampleModel("mnist_cnn"));  // already open: its tab comes back
    ASSERT_TRUE(testing::waitFor([&] { return window.currentPage() == page; }));
    EXPECT_EQ(run->controller(), controller);
    EXPECT_EQ(run->lastOutcome(), controller->lastRun());
    EXPECT_EQ(run->inputSource(QStringLiteral("image")).kind, widgets::InputSource::Kind::Ones);
    EXPECT_EQ(controller->sessionsCompiled(), 1);
    EXPECT_EQ(second->controller()->sessionsCompiled(), 1);

    // Other threads for the benchmark compile that model's session again: still one at a time.
    bench->threadsSpin()->setValue(1);
    bench->start();
    ASSERT_TRUE(testing::waitFor([&] { return benchmarked.count() == 2; }, 60000))
        << bench->statusText().toStdString();
    EXPECT_EQ(controller->lastBenchmark()->threads, 1);
    EXPECT_EQ(controller->sessionsCompiled(), 2);
    ASSERT_TRUE(controller->compiledModel());
    EXPECT_EQ(controller->compiledModel()->threads, 1);
}

// Closing a tab ends its model's engine work (here an endless benchmark) and nothing else: the
// Benchmark dock reports it, the other tab and its compiled session stay.
TEST_F(ModelControllerTest, ClosingATabStopsItsBenchmarkAndKeepsTheOtherTab) {
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* other = testing::openAndDraw(window, sampleModel("legacy_opset10"));
    ASSERT_NE(other, nullptr);
    ASSERT_TRUE(testing::waitFor([&] { return other->controller()->isReady(); }, 60000));
    widgets::GraphPage* page = testing::openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    widgets::BenchmarkPanel* bench = window.benchmarkPanel();
    bench->warmupSpin()->setValue(0);
    bench->runsSpin()->setValue(1000000);  // hours: only closing the tab ends it
    bench->threadsSpin()->setValue(1);
    bench->profileCheck()->setChecked(false);
    QSignalSpy cancelled(bench, &widgets::BenchmarkPanel::cancelled);
    bench->start();
    ASSERT_TRUE(testing::waitFor([&] { return bench->progressBar()->value() >= 3; }, 60000));
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_NE(tabs, nullptr);
    emit tabs->tabCloseRequested(tabs->indexOf(page));
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1; }, 10000));
    EXPECT_FALSE(bench->isRunning());
    EXPECT_TRUE(bench->statusText().contains(QStringLiteral("closed")))
        << bench->statusText().toStdString();
    ASSERT_EQ(window.pageCount(), 1);
    EXPECT_EQ(window.currentPage(), other);
    EXPECT_TRUE(other->controller()->isReady());
    EXPECT_EQ(window.runPanel()->controller(), other->controller());
    EXPECT_TRUE(window.benchmarkPanel()->startAction()->isEnabled());
}

// x -> Relu -> y, importing ai.onnx opset 99: the engine knows 24 and the onnx library 17.
TEST_F(ModelControllerTest, ANewerOpsetIsRefusedUntilRunAnyway) {
    using namespace testing;
    auto model = makeModelShell(99);
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"2", "3"});
    addNode(g, "Relu", "relu", {"x"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"2", "3"});
    QTemporaryDir dir;
    gui::MainWindow window;
    window.show();
    widgets::GraphPage* page = openAndDraw(window, writeModel(dir, "opset99.onnx", *model));
    ASSERT_NE(page, nullptr);
    widgets::RunPanel* run = window.runPanel();
    ASSERT_TRUE(waitFor([&] { return !run->runAnywayButton()->isHidden(); }));
    EXPECT_TRUE(run->statusText().contains(QStringLiteral("opset 99")))
        << run->statusText().toStdString();
    EXPECT_TRUE(run->statusText().contains(QStringLiteral("Run anyway")));
    EXPECT_FALSE(run->isReady());
    EXPECT_FALSE(run->runAction()->isEnabled());
    EXPECT_EQ(page->controller()->sessionsCompiled(), 0);

    // The benchmark is refused with the same reason, nothing compiled.
    QSignalSpy benchmarkFailed(window.benchmarkPanel(), &widgets::BenchmarkPanel::failed);
    window.benchmarkPanel()->start();
    ASSERT_EQ(benchmarkFailed.count(), 1);
    EXPECT_TRUE(benchmarkFailed.at(0).at(0).toString().contains(QStringLiteral("opset 99")));
    EXPECT_FALSE(window.benchmarkPanel()->isRunning());
    EXPECT_EQ(page->controller()->sessionsCompiled(), 0);

    run->runAnywayButton()->click();
    ASSERT_TRUE(waitFor([&] { return run->isReady() && !run->isBusy(); }, 60000));
    EXPECT_TRUE(run->runAnywayButton()->isHidden());
    EXPECT_TRUE(run->statusText().contains(QStringLiteral("Warning")))
        << run->statusText().toStdString();
    QSignalSpy ran(run, &widgets::RunPanel::runFinished);
    run->run();
    ASSERT_TRUE(waitFor([&] { return ran.count() == 1; }, 60000));
    EXPECT_EQ(page->controller()->sessionsCompiled(), 1);
}

}  // namespace
}  // namespace onnxlens
