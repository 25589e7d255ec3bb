// The Benchmark dock as a person uses it: a short benchmark of a sample model (statistics,
// charts, profile, heat overlay), the exports, cancelling a long benchmark, remembered settings,
// the feeds provider on the worker thread, the Run dock's inputs timed, and View > Show Optimized
// Graph.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QDockWidget>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QThread>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/model/NodeNames.h"
#include "widgets/charts/LatencyCharts.h"
#include "widgets/graph/GraphExport.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/HeatLegend.h"
#include "widgets/graph/OptimizedGraph.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ProfileTableModel.h"
#include "widgets/panels/ProfileView.h"
#include "widgets/panels/RunPanel.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::BenchmarkPanel;
using widgets::GraphPage;

QString sampleModel(const char* name) {
    return QString::fromUtf8(ONNXLENS_SOURCE_DIR) + "/resources/samples/" + name + "/model.onnx";
}

// x[1,3,16,16] -> Conv(8, 3x3) -> BatchNormalization -> Relu -> y: the optimizer folds the
// normalization into the convolution.
std::shared_ptr<onnx::ModelProto> makeConvBatchNorm() {
    using namespace testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"1", "3", "16", "16"});
    *g.add_initializer() = makeFloatInitializer("conv.weight", {8, 3, 3, 3});
    *g.add_initializer() = makeFloatInitializer("conv.bias", {8});
    for (const char* p : {"bn.scale", "bn.bias", "bn.mean"})
        *g.add_initializer() = makeFloatInitializer(p, {8});
    auto var = makeFloatInitializer("bn.var", {8});
    var.clear_raw_data();
    for (int i = 0; i < 8; ++i) var.add_float_data(1.0f + 0.1f * static_cast<float>(i));
    *g.add_initializer() = var;
    auto* conv = addNode(g, "Conv", "/conv/Conv", {"x", "conv.weight", "conv.bias"}, {"c"});
    addIntsAttribute(conv, "kernel_shape", {3, 3});
    addIntsAttribute(conv, "pads", {1, 1, 1, 1});
    addNode(g, "BatchNormalization", "/bn/BatchNormalization",
            {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"b"});
    addNode(g, "Relu", "/relu/Relu", {"b"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"1", "8", "16", "16"});
    return model;
}

// Three unnamed operators (as older exporters write them) that no optimizer pass touches.
std::shared_ptr<onnx::ModelProto> makeUnnamedChain() {
    using namespace testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"batch", "64"});
    addNode(g, "Relu", "", {"x"}, {"r"});
    addNode(g, "Neg", "", {"r"}, {"n"});
    addNode(g, "Sigmoid", "", {"n"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"batch", "64"});
    return model;
}

class BenchmarkPanelTest : public ::testing::Test {
  protected:
    // ctest runs each GUI test in its own process, in parallel, and they share one settings
    // file: these tests open files (recent files) and change the benchmark settings, so they
    // keep their own file, and leave the other tests' alone.
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        savedName_ = QCoreApplication::applicationName();
        QCoreApplication::setApplicationName(savedName_ + "-benchmark");
        testing::clearSettings();
    }
    void TearDown() override { QCoreApplication::setApplicationName(savedName_); }

    QString savedName_;

    static GraphPage* openAndDraw(MainWindow& window, const QString& path) {
        return testing::openAndDraw(window, path);
    }

    // Runs a benchmark through Benchmark > Run Benchmark and waits for it.
    static bool runBenchmark(MainWindow& window, int warmup, int runs, bool profile = true) {
        BenchmarkPanel* panel = window.benchmarkPanel();
        panel->warmupSpin()->setValue(warmup);
        panel->runsSpin()->setValue(runs);
        panel->threadsSpin()->setValue(1);
        panel->profileCheck()->setChecked(profile);
        QSignalSpy finished(panel, &BenchmarkPanel::finished);
        panel->startAction()->trigger();
        return testing::waitFor([&] { return finished.count() == 1; }, 60000);
    }

    QTemporaryDir dir_;
};

TEST_F(BenchmarkPanelTest, ShortBenchmarkShowsOrderedStatisticsChartsAndAConsistentProfile) {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    GraphPage* page = openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    BenchmarkPanel* panel = window.benchmarkPanel();
    panel->heatAction()->setChecked(true);
    testing::StallMeter stalls;
    ASSERT_TRUE(runBenchmark(window, 2, 15)) << panel->statusText().toStdString();
    std::printf("[ timing ] longest GUI-thread stall during a 17-run benchmark: %.1f ms\n",
                stalls.worstStallMs());
    EXPECT_TRUE(window.benchmarkDock()->isVisible());

    auto result = panel->result();
    ASSERT_NE(result, nullptr);
    const auto& s = result->statistics;
    EXPECT_EQ(s.runs, 15);
    EXPECT_EQ(result->threads, 1);
    EXPECT_LE(s.minMs, s.medianMs);
    EXPECT_LE(s.medianMs, s.p90Ms);
    EXPECT_LE(s.p90Ms, s.p99Ms);
    EXPECT_LE(s.p99Ms, s.maxMs);
    EXPECT_TRUE(panel->statusText().contains("median")) << panel->statusText().toStdString();

    // The table shows the same numbers.
    QTableWidget* table = panel->statisticsTable();
    ASSERT_GE(table->rowCount(), 7);
    EXPECT_EQ(table->item(2, 0)->text(), "median (P50)");
    EXPECT_EQ(table->item(2, 1)->text(), QString::number(s.medianMs, 'f', 3) + " ms");

    // Charts: every counted run is in the histogram and in the series.
    const auto& counts = panel->charts()->histogramCounts();
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), 15);
    EXPECT_EQ(panel->charts()->timeSeriesPoints(), 15);

    // Profile: the summed node time of a run is below the run time (node intervals lie inside
    // the timed run) and above half of it (the rest is the executor's bookkeeping, small next to
    // two convolutions and two Gemms).
    ASSERT_TRUE(result->profiled);
    EXPECT_LE(result->nodeTimePerRunMs(), s.meanMs);
    EXPECT_GE(result->nodeTimePerRunMs(), 0.5 * s.meanMs);
    double typeShares = 0;
    for (const auto& op : result->opTypes) typeShares += op.share;
    EXPECT_NEAR(typeShares, 1.0, 1e-9);

    widgets::ProfileView* profile = panel->profileView();
    EXPECT_EQ(profile->nodeProxy()->rowCount(), static_cast<int>(result->nodes.size()));
    EXPECT_EQ(profile->opTypeProxy()->rowCount(), static_cast<int>(result->opTypes.size()));
    EXPECT_GT(profile->barCount(), 0);
    // Sorted by time, largest first; then by name when the header is clicked.
    auto* ops = profile->opTypeProxy();
    for (int r = 1; r < ops->rowCount(); ++r)
        EXPECT_GE(ops->index(r - 1, widgets::ProfileTableModel::MsColumn)
                      .data(widgets::ProfileTableModel::SortRole)
                      .toDouble(),
                  ops->index(r, widgets::ProfileTableModel::MsColumn)
                      .data(widgets::ProfileTableModel::SortRole)
                      .toDouble());
    profile->opTypeTable()->sortByColumn(widgets::ProfileTableModel::NameColumn,
                                         Qt::AscendingOrder);
    for (int r = 1; r < ops->rowCount(); ++r)
        EXPECT_LT(ops->index(r - 1, 0).data().toString(), ops->index(r, 0).data().toString());
    profile->setNodeFilter("Conv");
    EXPECT_GE(profile->nodeProxy()->rowCount(), 1);
    EXPECT_LT(profile->nodeProxy()->rowCount(), static_cast<int>(result->nodes.size()));
    profile->setNodeFilter(QString());

    // Heat overlay (on by default): profiled nodes coloured, the hottest darkest, legend shown.
    auto* scene = page->scene();
    ASSERT_TRUE(scene->hasHeat());
    EXPECT_TRUE(page->heatLegend()->isVisible());
    // Every profiled node of the model is heated; the layout reorders the optimizer inserts
    // (com.onnxlens ReorderToBlocked/ReorderFromBlocked) have no node in the drawn graph.
    int drawnProfiled = 0;
    for (const auto& node : result->nodes) {
        if (page->shownViewGraph()->findNodeByName(node.nodeName) >= 0)
            ++drawnProfiled;
        else
            EXPECT_TRUE(node.opType.rfind("Reorder", 0) == 0) << node.nodeName;
    }
    EXPECT_GE(drawnProfiled, 4);
    EXPECT_EQ(scene->heatedNodeCount(), drawnProfiled);
    EXPECT_NEAR(page->heatLegend()->maxShare(), result->nodes.front().share, 1e-12);
    const int hottest = page->shownViewGraph()->findNodeByName(result->nodes.front().nodeName);
    ASSERT_GE(hottest, 0);
    ASSERT_NE(scene->nodeItem(hottest), nullptr);
    EXPECT_EQ(scene->nodeItem(hottest)->heatColour(), widgets::heatColour(1.0));
    EXPECT_TRUE(scene->nodeItem(hottest)->toolTip().contains("ms per run"))
        << scene->nodeItem(hottest)->toolTip().toStdString();
    EXPECT_TRUE(scene->nodeItem(hottest)->toolTip().contains("%"));

    panel->heatAction()->setChecked(false);
    EXPECT_FALSE(scene->hasHeat());
    EXPECT_FALSE(page->heatLegend()->isVisible());
    EXPECT_FALSE(scene->nodeItem(hottest)->isHeatShown());
    panel->heatAction()->setChecked(true);
    EXPECT_TRUE(page->heatLegend()->isVisible());

    // Double-clicking a node row selects it in the graph.
    profile->nodeActivated(QString::fromStdString(result->nodes.front().nodeName));
    EXPECT_TRUE(testing::waitFor([&] { return scene->selectedNode() == hottest; }, 5000));
}

// The dock knows no page: each tab colours itself from its own controller's benchmark, the dock
// follows the current tab's controller, and a node the dock names is revealed on the current tab
// (or the dock says the shown graph has no such node).
TEST_F(BenchmarkPanelTest, EachTabKeepsItsOwnHeatAndTheDockFollowsTheCurrentTab) {
    MainWindow window;
    window.show();
    GraphPage* conv =
        openAndDraw(window, testing::writeModel(dir_, "conv_bn.onnx", *makeConvBatchNorm()));
    ASSERT_NE(conv, nullptr);
    ASSERT_TRUE(runBenchmark(window, 0, 3));
    BenchmarkPanel* panel = window.benchmarkPanel();
    const auto convResult = panel->result();
    ASSERT_NE(convResult, nullptr);
    EXPECT_EQ(panel->controller(), conv->controller());
    EXPECT_TRUE(conv->scene()->hasHeat());

    GraphPage* mnist = openAndDraw(window, sampleModel("mnist_cnn"));
    ASSERT_NE(mnist, nullptr);
    ASSERT_EQ(window.currentPage(), mnist);
    EXPECT_EQ(panel->controller(), mnist->controller());
    EXPECT_EQ(panel->result(), nullptr);  // this model was not benchmarked
    EXPECT_FALSE(mnist->scene()->hasHeat());
    EXPECT_TRUE(conv->scene()->hasHeat());  // the other tab keeps its colouring

    // Colour Graph by Time off and on again: every tab follows, each with its own result.
    panel->heatAction()->setChecked(false);
    EXPECT_FALSE(conv->scene()->hasHeat());
    panel->heatAction()->setChecked(true);
    EXPECT_TRUE(conv->scene()->hasHeat());
    EXPECT_FALSE(mnist->scene()->hasHeat());

    // A node name the shown graph lacks (the optimizer made the fused node): the dock says so.
    emit panel->nodeActivated(QStringLiteral("no_such_node"));
    EXPECT_TRUE(panel->statusText().contains("not in the graph shown"))
        << panel->statusText().toStdString();

    ASSERT_TRUE(runBenchmark(window, 0, 3));
    EXPECT_TRUE(mnist->scene()->hasHeat());
    const auto mnistResult = panel->result();
    ASSERT_NE(mnistResult, nullptr);
    const int hottest =
        mnist->shownViewGraph()->findNodeByName(mnistResult->nodes.front().nodeName);
    ASSERT_GE(hottest, 0);
    emit panel->nodeActivated(QString::fromStdString(mnistResult->nodes.front().nodeName));
    EXPECT_TRUE(testing::waitFor([&] { return mnist->scene()->selectedNode() == hottest; }, 5000));

    // Back to the first tab: the dock shows that model's result again.
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_NE(tabs, nullptr);
    tabs->setCurrentWidget(conv);
    EXPECT_EQ(panel->controller(), conv->controller());
    EXPECT_EQ(panel->result(), convResult);
}

TEST_F(BenchmarkPanelTest, ExportsWriteValidTraceJsonAndMarkdown) {
    MainWindow window;
    window.show();
    ASSERT_NE(openAndDraw(window, sampleModel("mnist_cnn")), nullptr);
    BenchmarkPanel* panel = window.benchmarkPanel();
    EXPECT_FALSE(panel->exportJson(dir_.filePath("none.json")).isEmpty());  // nothing to export yet
    ASSERT_TRUE(runBenchmark(window, 1, 4));
    auto result = panel->result();
    ASSERT_NE(result, nullptr);

    const QString trace = dir_.filePath("trace.json"), json = dir_.filePath("result.json"),
                  markdown = dir_.filePath("result.md");
    ASSERT_EQ(panel->exportTrace(trace), QString());
    ASSERT_EQ(panel->exportJson(json), QString());
    ASSERT_EQ(panel->exportMarkdown(markdown), QString());

    auto events = nlohmann::json::parse(std::ifstream(trace.toStdString()));
    ASSERT_TRUE(events.is_array());
    EXPECT_EQ(events.size(), 4 * result->nodes.size());  // one event per node per counted run
    for (const auto& e : events) {
        EXPECT_EQ(e["ph"], "X");
        EXPECT_GE(e["dur"].get<double>(), 0);
    }
    auto doc = nlohmann::json::parse(std::ifstream(json.toStdString()));
    EXPECT_EQ(doc["runs"], 4);
    EXPECT_EQ(doc["samples_ms"].size(), 4u);
    EXPECT_DOUBLE_EQ(doc["median_ms"].get<double>(), result->statistics.medianMs);
    EXPECT_EQ(doc["model"], sampleModel("mnist_cnn").toStdString());
    EXPECT_EQ(doc["nodes"].size(), result->nodes.size());
    std::ifstream md(markdown.toStdString());
    std::string first;
    std::getline(md, first);
    EXPECT_EQ(first, "# Benchmark: " + sampleModel("mnist_cnn").toStdString());

    // A folder that does not exist: the error names the file.
    const QString bad = dir_.filePath("missing/result.json");
    const QString error = panel->exportJson(bad);
    EXPECT_TRUE(error.contains(bad)) << error.toStdString();
}

TEST_F(BenchmarkPanelTest, CancelStopsALongBenchmarkAndKeepsTheGuiResponsive) {
    MainWindow window;
    window.show();
    ASSERT_NE(openAndDraw(window, sampleModel("mnist_cnn")), nullptr);
    BenchmarkPanel* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(0);
    panel->runsSpin()->setValue(1000000);  // hours: only cancel ends it
    panel->threadsSpin()->setValue(1);
    QSignalSpy cancelled(panel, &BenchmarkPanel::cancelled);
    QSignalSpy finished(panel, &BenchmarkPanel::finished);
    testing::StallMeter stalls;
    panel->start();
    ASSERT_TRUE(panel->isRunning());
    EXPECT_FALSE(panel->startAction()->isEnabled());
    EXPECT_TRUE(panel->cancelAction()->isEnabled());
    ASSERT_TRUE(testing::waitFor([&] { return panel->progressBar()->value() >= 5; }, 30000));
    QElapsedTimer clock;
    clock.start();
    panel->cancelAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1; }, 10000));
    std::printf(
        "[ timing ] benchmark stopped %lld ms after Cancel; longest GUI-thread stall %.1f ms\n",
        static_cast<long long>(clock.elapsed()), stalls.worstStallMs());
    EXPECT_LT(clock.elapsed(), 3000);
    EXPECT_EQ(finished.count(), 0);
    EXPECT_FALSE(panel->isRunning());
    EXPECT_EQ(panel->result(), nullptr);
    EXPECT_TRUE(panel->statusText().contains("cancelled"));
    EXPECT_TRUE(panel->startAction()->isEnabled());
    // The GUI thread drew and reacted throughout: no stall near a run's length times the runs.
    EXPECT_LT(stalls.worstStallMs(), 500.0 * testing::kStallBoundScale);
}

TEST_F(BenchmarkPanelTest, SettingsAreRemembered) {
    {
        BenchmarkPanel panel;
        panel.warmupSpin()->setValue(3);
        panel.runsSpin()->setValue(123);
        panel.threadsSpin()->setValue(2);
        panel.profileCheck()->setChecked(false);
    }
    BenchmarkPanel again;
    EXPECT_EQ(again.warmupSpin()->value(), 3);
    EXPECT_EQ(again.runsSpin()->value(), 123);
    EXPECT_EQ(again.threadsSpin()->value(), 2);
    EXPECT_FALSE(again.profileCheck()->isChecked());
    EXPECT_FALSE(again.startAction()->isEnabled());  // no model open
}

TEST_F(BenchmarkPanelTest, FeedsProviderRunsOnTheWorkerThreadAndItsErrorIsShown) {
    MainWindow window;
    window.show();
    ASSERT_NE(openAndDraw(window, sampleModel("mnist_cnn")), nullptr);
    BenchmarkPanel* panel = window.benchmarkPanel();
    std::atomic<bool> onGuiThread{true};
    QThread* gui = QThread::currentThread();
    panel->setFeedsProvider([&onGuiThread, gui]() -> Result<std::map<std::string, engine::Value>> {
        onGuiThread = QThread::currentThread() == gui;
        return makeError("digit.png", "not a 28x28 image");
    });
    QSignalSpy failed(panel, &BenchmarkPanel::failed);
    panel->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }));
    EXPECT_FALSE(onGuiThread.load());
    EXPECT_TRUE(failed.at(0).at(0).toString().contains("digit.png: not a 28x28 image"));
    EXPECT_TRUE(panel->statusText().contains("not a 28x28 image"));
    EXPECT_FALSE(panel->isRunning());
}

TEST_F(BenchmarkPanelTest, TimesTheInputsChosenInTheRunDock) {
    MainWindow window;
    window.show();
    ASSERT_NE(openAndDraw(window, sampleModel("mnist_cnn")), nullptr);
    widgets::RunPanel* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady(); }, 60000));
    BenchmarkPanel* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(0);
    panel->runsSpin()->setValue(2);
    panel->threadsSpin()->setValue(1);
    panel->profileCheck()->setChecked(false);

    // A file of the wrong shape chosen in the Run dock ([1x3x224x224] for mnist's [1x1x28x28]):
    // the benchmark reads that file, so it fails naming it; random data would have run.
    const std::filesystem::path samples =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples";
    widgets::InputSource file;
    file.kind = widgets::InputSource::Kind::File;
    file.file = samples / "squeezenet1_1" / "test_data_set_0" / "input_0.pb";
    run->setInputSource(QStringLiteral("image"), file);
    QSignalSpy failed(panel, &BenchmarkPanel::failed);
    QSignalSpy finished(panel, &BenchmarkPanel::finished);
    panel->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }, 60000));
    EXPECT_TRUE(failed.at(0).at(0).toString().contains(QStringLiteral("input_0.pb")))
        << failed.at(0).at(0).toString().toStdString();
    EXPECT_EQ(finished.count(), 0);

    // The model's own reference input chosen instead: the next benchmark runs on it.
    file.file = samples / "mnist_cnn" / "test_data_set_0" / "input_0.pb";
    run->setInputSource(QStringLiteral("image"), file);
    panel->start();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000))
        << panel->statusText().toStdString();
    EXPECT_EQ(failed.count(), 1);
    ASSERT_NE(panel->result(), nullptr);
}

TEST_F(BenchmarkPanelTest, HeatOverlayColoursUnnamedNodes) {
    MainWindow window;
    window.show();
    GraphPage* page =
        openAndDraw(window, testing::writeModel(dir_, "unnamed.onnx", *makeUnnamedChain()));
    ASSERT_NE(page, nullptr);
    window.benchmarkPanel()->heatAction()->setChecked(true);
    ASSERT_TRUE(runBenchmark(window, 1, 3));
    auto result = window.benchmarkPanel()->result();
    ASSERT_NE(result, nullptr);
    ASSERT_EQ(result->nodes.size(), 3u);
    EXPECT_EQ(page->scene()->heatedNodeCount(), 3);
    const auto& view = *page->shownViewGraph();
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n) {
        if (view.nodes[n].kind != ViewNode::Kind::Operator) continue;
        EXPECT_TRUE(view.nodes[n].name.empty());
        ASSERT_TRUE(page->scene()->heatOfNode(n).has_value())
            << profileNameOf(*view.nodes[n].proto);
        ASSERT_NE(page->scene()->nodeItem(n), nullptr);
        EXPECT_TRUE(page->scene()->nodeItem(n)->heatColour().has_value());
    }
}

TEST_F(BenchmarkPanelTest, ShowOptimizedGraphTogglesToTheFoldedGraphAndBack) {
    MainWindow window;
    window.show();
    GraphPage* page =
        openAndDraw(window, testing::writeModel(dir_, "conv_bn.onnx", *makeConvBatchNorm()));
    ASSERT_NE(page, nullptr);
    const auto original = page->shownViewGraph();
    EXPECT_EQ(original->operatorCount, 3);
    QSignalSpy drawn(page, &GraphPage::drawn);

    window.showOptimizedAction()->setChecked(true);
    ASSERT_TRUE(
        testing::waitFor([&] { return page->shownViewGraph() != original && page->isDrawn(); }));
    EXPECT_TRUE(page->isShowingOptimized());
    const auto& optimized = *page->shownViewGraph();
    // BatchNormalization folded into the Conv, then the Relu fused into it (com.onnxlens
    // FusedConv); where oneDNN computes in a channel-blocked layout, the Conv is a BlockedConv
    // reading the few plain input channels itself, and one reorder hands the output back.
    const bool blocked = engine::preferredChannelBlock() != 0;
    const int expectedNodes = blocked ? 2 : 1;
    EXPECT_EQ(optimized.operatorCount, expectedNodes);
    int items = 0;
    std::multiset<std::string> opTypes;
    for (int n = 0; n < static_cast<int>(optimized.nodes.size()); ++n) {
        if (optimized.nodes[n].kind != ViewNode::Kind::Operator) continue;
        opTypes.insert(optimized.nodes[n].opType);
        if (page->scene()->nodeItem(n)) ++items;
    }
    const std::multiset<std::string> expectedTypes =
        blocked ? std::multiset<std::string>{"BlockedConv", "ReorderFromBlocked"}
                : std::multiset<std::string>{"FusedConv"};
    EXPECT_EQ(opTypes, expectedTypes);
    EXPECT_EQ(items, expectedNodes);
    ASSERT_NE(page->optimizedGraph(), nullptr);
    EXPECT_EQ(page->optimizedGraph()->report.nodesBefore, 3);
    EXPECT_EQ(page->optimizedGraph()->report.nodesAfter, expectedNodes);

    // Selecting a node of the optimized graph shows that node.
    const int conv = optimized.findNodeByName("/conv/Conv");
    ASSERT_GE(conv, 0);
    page->scene()->selectNode(conv);
    EXPECT_EQ(page->scene()->selectedNode(), conv);

    window.showOptimizedAction()->setChecked(false);
    ASSERT_TRUE(
        testing::waitFor([&] { return page->shownViewGraph() == original && page->isDrawn(); }));
    EXPECT_EQ(page->shownViewGraph()->operatorCount, 3);
    EXPECT_FALSE(page->isShowingOptimized());
    EXPECT_GE(drawn.count(), 2);

    // Back again: the optimized graph is kept, no second compile.
    auto kept = page->optimizedGraph();
    window.showOptimizedAction()->setChecked(true);
    EXPECT_FALSE(page->isOptimizedPending());
    EXPECT_EQ(page->optimizedGraph(), kept);
    ASSERT_TRUE(testing::waitFor([&] { return page->isDrawn(); }));
    EXPECT_EQ(page->shownViewGraph()->operatorCount, expectedNodes);
}

TEST_F(BenchmarkPanelTest, OptimizedGraphOfAModelTheEngineCannotRunIsAnErrorNotACrash) {
    using namespace testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"4"});
    auto* custom = addNode(g, "Frobnicate", "custom", {"x"}, {"y"});
    custom->set_domain("com.example");
    auto* opset = model->add_opset_import();
    opset->set_domain("com.example");
    opset->set_version(1);
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"4"});
    MainWindow window;
    window.show();
    GraphPage* page = openAndDraw(window, writeModel(dir_, "custom.onnx", *model));
    ASSERT_NE(page, nullptr);
    QSignalSpy failed(page, &GraphPage::optimizedGraphFailed);
    window.showOptimizedAction()->setChecked(true);
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }));
    EXPECT_TRUE(failed.at(0).at(0).toString().contains("Frobnicate"))
        << failed.at(0).at(0).toString().toStdString();
    EXPECT_FALSE(page->isShowingOptimized());
    EXPECT_FALSE(window.showOptimizedAction()->isChecked());
    EXPECT_EQ(page->shownViewGraph(), page->document().view);
}

TEST(HeatOverlay, CollapsedGroupsShowTheSummedShareAndTheScaleFollowsWhatIsOnScreen) {
    auto built = buildViewGraph(testing::makeTransformerLike(40));
    ASSERT_TRUE(built);
    widgets::GraphScene scene(std::make_shared<const ViewGraph>(std::move(built.value())));
    const auto& view = scene.view();
    scene.expandForOverview();  // 40 layers: opens collapsed
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    // Every operator takes the same time: a group's share is its share of the operators.
    widgets::NodeHeatMap heat;
    for (const auto& node : view.nodes)
        if (node.kind == ViewNode::Kind::Operator && node.proto)
            heat[profileNameOf(*node.proto)] = {1.0 / view.operatorCount, 0.01};
    QSignalSpy scaleChanged(&scene, &widgets::GraphScene::heatScaleChanged);
    scene.setNodeHeat(heat);
    EXPECT_EQ(scaleChanged.count(), 1);
    int collapsed = -1;
    double hottestOnScreen = 0;
    for (int g = 1; g < static_cast<int>(view.groups.size()); ++g) {
        auto* item = scene.groupItem(g);
        if (!item || item->isExpanded()) continue;
        EXPECT_NEAR(scene.heatOfGroup(g).share,
                    static_cast<double>(view.groups[g].nodeCount) / view.operatorCount, 1e-9);
        EXPECT_TRUE(item->heatColour().has_value());
        EXPECT_TRUE(item->toolTip().contains("ms per run"));
        hottestOnScreen = std::max(hottestOnScreen, scene.heatOfGroup(g).share);
        if (collapsed < 0 || view.groups[g].nodeCount > view.groups[collapsed].nodeCount)
            collapsed = g;
    }
    ASSERT_GE(collapsed, 0);
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n)
        if (scene.nodeItem(n) && scene.heatOfNode(n))
            hottestOnScreen = std::max(hottestOnScreen, scene.heatOfNode(n)->share);
    EXPECT_DOUBLE_EQ(scene.maxHeatShare(), hottestOnScreen);
    EXPECT_EQ(scene.groupItem(collapsed)->heatColour(), widgets::heatColour(1.0));

    // Opened, the biggest group is a frame (no fill) and the scale drops to what is visible now.
    scene.setExpanded(collapsed, true);
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    ASSERT_NE(scene.groupItem(collapsed), nullptr);
    EXPECT_FALSE(scene.groupItem(collapsed)->heatColour().has_value());
    EXPECT_LT(scene.maxHeatShare(), hottestOnScreen);
    EXPECT_GT(scaleChanged.count(), 1);

    scene.clearHeat();
    EXPECT_FALSE(scene.hasHeat());
    for (int g = 0; g < static_cast<int>(view.groups.size()); ++g)
        if (scene.groupItem(g)) {
            EXPECT_FALSE(scene.groupItem(g)->heatColour().has_value());
        }
}

}  // namespace
}  // namespace onnxlens
