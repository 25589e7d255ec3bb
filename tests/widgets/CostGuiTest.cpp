// The cost model in the window: the Model and Node panels' figures, View > Colour by FLOPs /
// Parameters / Memory, the roofline of a profiled benchmark, and the Sweep tab. The small CNN's
// figures are counted by hand here (batch 1):
//   conv1 [1,1,28,28] * W[8,1,3,3] -> [1,8,26,26]: 5408 outputs x 9 = 48672 MACs,
//         FLOPs 2 x 48672 + 5408 (bias) = 102752; params 72 + 8; reads 3136 B, writes 21632 B
//   relu1 5408 FLOPs; pool1 [1,8,13,13] = 1352 outputs x 4 = 5408 FLOPs; flatten 0
//   fc    1 x 10 x 1352 = 13520 MACs, FLOPs 27040 + 10 (C) = 27050; params 13520 + 10
//   softmax 3 x 10 = 30 FLOPs
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QCoreApplication>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/model/NodeNames.h"
#include "widgets/charts/RooflineChart.h"
#include "widgets/graph/CostText.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/HeatLegend.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ModelPanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/panels/ProfileTableModel.h"
#include "widgets/panels/ProfileView.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/panels/SweepTab.h"
#include "widgets/workers/ModelController.h"
#include "widgets/workers/RooflineAnalysis.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::GraphPage;

constexpr double kCnnMacs = 48672 + 13520;
constexpr double kCnnFlops = 102752 + 5408 + 5408 + 27050 + 30;
constexpr double kCnnParameters = 72 + 8 + 13520 + 10;

class CostGuiTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        savedName_ = QCoreApplication::applicationName();
        QCoreApplication::setApplicationName(savedName_ + "-cost");
        testing::clearSettings();
        cnn_ = testing::writeModel(dir_, "cnn.onnx", *testing::makeSmallCnn());
    }
    void TearDown() override { QCoreApplication::setApplicationName(savedName_); }

    QTemporaryDir dir_;
    QString savedName_;
    QString cnn_;
};

// The value column of `key` under the top-level `section` of a panel's tree.
QTreeWidgetItem* treeRow(QTreeWidget* tree, const QString& section, const QString& key) {
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
        auto* s = tree->topLevelItem(i);
        if (s->text(0) != section) continue;
        for (int k = 0; k < s->childCount(); ++k)
            if (s->child(k)->text(0) == key) return s->child(k);
    }
    return nullptr;
}

double exactOf(QTreeWidgetItem* row) { return row ? row->toolTip(1).toDouble() : -1; }

TEST_F(CostGuiTest, ModelAndNodePanelsShowTheHandCountedFigures) {
    MainWindow window;
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    ASSERT_NE(page->document().cost, nullptr) << page->document().costError.toStdString();
    EXPECT_DOUBLE_EQ(page->document().cost->total.macs, kCnnMacs);

    QTreeWidget* model = window.modelPanel()->tree();
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "MACs")), kCnnMacs);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "FLOPs")), kCnnFlops);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "parameters")), kCnnParameters);
    ASSERT_NE(treeRow(model, "Cost", "symbolic dims"), nullptr);
    EXPECT_EQ(treeRow(model, "Cost", "symbolic dims")->text(1), "batch = 1");
    auto* params = treeRow(model, "Cost", "parameters");
    ASSERT_EQ(params->childCount(), 1);
    EXPECT_EQ(params->child(0)->text(0), "float32");
    EXPECT_EQ(params->child(0)->toolTip(1).toDouble(), kCnnParameters);
    // Peak: the conv's 21632-byte output and the relu's (the conv output is freed after relu).
    ASSERT_NE(treeRow(model, "Cost", "peak activation memory"), nullptr);
    EXPECT_TRUE(treeRow(model, "Cost", "peak activation memory")->text(1).contains("relu1"))
        << treeRow(model, "Cost", "peak activation memory")->text(1).toStdString();

    const int conv = page->document().view->findNodeByName("conv1");
    page->scene()->selectNode(conv);
    QTreeWidget* node = window.nodePanel()->details();
    ASSERT_TRUE(testing::waitFor([&] { return treeRow(node, "Cost", "MACs") != nullptr; }, 5000));
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "MACs")), 48672);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "FLOPs")), 102752);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "parameters")), 80);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "bytes read")), 28 * 28 * 4);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "bytes written")), 8 * 26 * 26 * 4);
    ASSERT_NE(treeRow(node, "Cost", "arithmetic intensity"), nullptr);
    const double intensity = 102752.0 / (28 * 28 * 4 + 8 * 26 * 26 * 4 + 80 * 4);
    EXPECT_TRUE(treeRow(node, "Cost", "arithmetic intensity")
                    ->text(1)
                    .startsWith(QString::number(intensity, 'g', 3)))
        << treeRow(node, "Cost", "arithmetic intensity")->text(1).toStdString();
    EXPECT_EQ(treeRow(node, "Cost", "estimate"), nullptr);
}

TEST_F(CostGuiTest, ANodeWhoseShapesAreUnknownSaysUnknownNotZero) {
    // x has a type but no shape: the MatMul's MACs cannot be counted; its weight still can.
    auto model = testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("unknown_shape");
    auto x = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {});
    x.mutable_type()->mutable_tensor_type()->clear_shape();
    *g.add_input() = x;
    *g.add_initializer() = testing::makeFloatInitializer("w", {4, 3});
    testing::addNode(g, "MatMul", "matmul", {"x", "w"}, {"y"});
    auto y = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {});
    y.mutable_type()->mutable_tensor_type()->clear_shape();
    *g.add_output() = y;
    const QString path = testing::writeModel(dir_, "unknown.onnx", *model);

    MainWindow window;
    GraphPage* page = testing::openAndDraw(window, path);
    ASSERT_NE(page, nullptr);
    page->scene()->selectNode(page->document().view->findNodeByName("matmul"));
    QTreeWidget* node = window.nodePanel()->details();
    ASSERT_TRUE(testing::waitFor([&] { return treeRow(node, "Cost", "MACs") != nullptr; }, 5000));
    EXPECT_EQ(treeRow(node, "Cost", "MACs")->text(1), "unknown");
    EXPECT_EQ(treeRow(node, "Cost", "FLOPs")->text(1), "unknown");
    EXPECT_EQ(treeRow(node, "Cost", "arithmetic intensity")->text(1), "unknown");
    // Activations of unknown size: nothing counted, so unknown too; the weight is known.
    EXPECT_EQ(treeRow(node, "Cost", "bytes read")->text(1), "unknown");
    EXPECT_EQ(treeRow(node, "Cost", "bytes written")->text(1), "unknown");
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "parameters")), 12);
    ASSERT_NE(treeRow(node, "Cost", "partial"), nullptr);
    EXPECT_NE(treeRow(node, "Cost", "MACs")->text(1), "0");
}

TEST_F(CostGuiTest, GroupTooltipShowsTheTotalsOfItsNodes) {
    // Two layers of the BERT-like model: each /encoder/layer.N group's tooltip gives its MACs.
    const QString path = testing::writeModel(dir_, "bert.onnx", *testing::makeTransformerLike(2));
    MainWindow window;
    GraphPage* page = testing::openAndDraw(window, path);
    ASSERT_NE(page, nullptr);
    ASSERT_NE(page->document().cost, nullptr);
    const auto& view = page->scene()->view();
    int checked = 0;
    for (int g = 1; g < static_cast<int>(view.groups.size()); ++g) {
        auto* item = page->scene()->groupItem(g);
        if (!item) continue;
        auto it = page->document().cost->scopes.find(view.groups[g].path);
        if (it == page->document().cost->scopes.end() || it->second.macs <= 0) continue;
        EXPECT_TRUE(item->toolTip().contains(widgets::siAmount(it->second.macs, "MACs")))
            << view.groups[g].path << ": " << item->toolTip().toStdString();
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

TEST_F(CostGuiTest, ColourByPaintsTheRightNodesHottestAndExcludesTheOtherColourings) {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    auto* scene = page->scene();
    const auto& view = scene->view();
    auto hottest = [&] {
        int best = -1;
        double share = -1;
        for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n)
            if (auto heat = scene->heatOfNode(n); heat && heat->share > share) {
                share = heat->share;
                best = n;
            }
        return best < 0 ? std::string() : view.nodes[best].name;
    };
    window.benchmarkPanel()->heatAction()->setChecked(true);

    window.colourByFlopsAction()->trigger();
    EXPECT_FALSE(window.benchmarkPanel()->heatAction()->isChecked());
    EXPECT_EQ(page->heatMeasure(), widgets::HeatMeasure::Flops);
    EXPECT_EQ(hottest(), "conv1");
    const int conv = view.findNodeByName("conv1");
    EXPECT_NEAR(scene->heatOfNode(conv)->share, 102752 / kCnnFlops, 1e-12);
    EXPECT_EQ(scene->nodeItem(conv)->heatColour(), widgets::heatColour(1.0));
    EXPECT_TRUE(scene->nodeItem(conv)->toolTip().contains("103 KFLOPs"))
        << scene->nodeItem(conv)->toolTip().toStdString();
    EXPECT_TRUE(page->heatLegend()->isVisible());
    EXPECT_TRUE(page->heatLegend()->title().contains("FLOPs"));

    window.colourByParametersAction()->trigger();
    EXPECT_FALSE(window.colourByFlopsAction()->isChecked());
    EXPECT_EQ(hottest(), "fc");
    EXPECT_DOUBLE_EQ(scene->heatOfNode(view.findNodeByName("fc"))->amount, 13530);
    // Nodes without weights are not coloured (grey): nothing to count.
    EXPECT_FALSE(scene->heatOfNode(view.findNodeByName("relu1")).has_value());

    // Bytes moved: fc reads 5408 B of activations and 54120 B of weights, the most of any node.
    window.colourByMemoryAction()->trigger();
    EXPECT_EQ(hottest(), "fc");
    EXPECT_DOUBLE_EQ(scene->heatOfNode(view.findNodeByName("fc"))->amount, 5408 + 40 + 54120);
    EXPECT_DOUBLE_EQ(scene->heatOfNode(view.findNodeByName("relu1"))->amount, 2 * 21632);

    // The remembered choice comes back with the next window.
    EXPECT_EQ(QSettings().value("view/colourBy").toString(), "memory");
    window.benchmarkPanel()->heatAction()->setChecked(true);
    EXPECT_FALSE(window.colourByMemoryAction()->isChecked());
    EXPECT_FALSE(scene->hasHeat());  // no profile yet: nothing to paint by time
    window.colourByMemoryAction()->setChecked(false);
    window.colourByFlopsAction()->trigger();
    MainWindow second;
    EXPECT_TRUE(second.colourByFlopsAction()->isChecked());
}

// Issue 33 part 2: the figures follow the dims the model ran with. The small CNN's counts scale
// with its batch (every node's work is per image), so batch 4 is four times the hand count.
TEST_F(CostGuiTest, CostsFollowTheDimsOfTheLastRunAndBenchmarkAndSayWhichTheyUsed) {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    QTreeWidget* model = window.modelPanel()->tree();
    ASSERT_NE(treeRow(model, "Cost", "dims from"), nullptr);
    EXPECT_EQ(treeRow(model, "Cost", "dims from")->text(1),
              "every symbolic dim taken as 1 until a run");
    const int conv = page->document().view->findNodeByName("conv1");
    page->scene()->selectNode(conv);
    window.colourByFlopsAction()->trigger();
    EXPECT_DOUBLE_EQ(page->scene()->heatOfNode(conv)->amount, 102752);

    auto* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady(); }, 60000));
    run->setSymbolValue("batch", 4);
    QSignalSpy changed(page->controller(), &widgets::ModelController::costChanged);
    run->runAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return changed.count() == 1; }, 60000))
        << run->statusText().toStdString();
    EXPECT_EQ(page->controller()->cost()->cost->dims.at("batch"), 4);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "MACs")), 4 * kCnnMacs);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "FLOPs")), 4 * kCnnFlops);
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "parameters")), kCnnParameters);
    EXPECT_EQ(treeRow(model, "Cost", "symbolic dims")->text(1), "batch = 4");
    EXPECT_EQ(treeRow(model, "Cost", "dims from")->text(1), "the last run's inputs");
    // The Node panel (conv1 still selected) and the colouring count the same batch.
    QTreeWidget* node = window.nodePanel()->details();
    EXPECT_DOUBLE_EQ(exactOf(treeRow(node, "Cost", "MACs")), 4 * 48672);
    ASSERT_NE(treeRow(node, "Cost", "with dims"), nullptr);
    EXPECT_EQ(treeRow(node, "Cost", "with dims")->text(1), "at batch = 4 (the last run's inputs)");
    EXPECT_DOUBLE_EQ(page->scene()->heatOfNode(conv)->amount, 4 * 102752);
    EXPECT_TRUE(page->heatLegend()->title().contains("batch = 4"))
        << page->heatLegend()->title().toStdString();

    // A benchmark at batch 2 counts again; the same dims again count nothing new.
    run->setSymbolValue("batch", 2);
    auto* benchmark = window.benchmarkPanel();
    benchmark->warmupSpin()->setValue(0);
    benchmark->runsSpin()->setValue(1);
    benchmark->profileCheck()->setChecked(false);
    benchmark->startAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return changed.count() == 2; }, 60000))
        << benchmark->statusText().toStdString();
    EXPECT_DOUBLE_EQ(exactOf(treeRow(model, "Cost", "MACs")), 2 * kCnnMacs);
    EXPECT_EQ(treeRow(model, "Cost", "dims from")->text(1), "the last benchmark's inputs");
    EXPECT_DOUBLE_EQ(exactOf(treeRow(window.nodePanel()->details(), "Cost", "MACs")), 2 * 48672);
    EXPECT_DOUBLE_EQ(page->scene()->heatOfNode(conv)->amount, 2 * 102752);
    EXPECT_FALSE(page->controller()->isCounting());
}

// Issue 33 part 2: Colour by FLOPs coloured 75 of 798 nodes of a BERT-base export (every node
// with 0 FLOPs and every node of unknown shape grey). Now every node the cost model counted is
// on the scale (a Reshape at its pale end) and the unknown ones are hatched and counted apart.
TEST_F(CostGuiTest, ColourByFlopsColoursEveryCountedNodeAndHatchesTheUnknownOnes) {
    const QString bert =
        testing::writeModel(dir_, "bert.onnx", *testing::makeTransformerLike(2, 16));
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = testing::openAndDraw(window, bert);
    ASSERT_NE(page, nullptr);
    window.colourByFlopsAction()->trigger();
    const auto& view = page->scene()->view();
    const auto cost = page->controller()->cost();
    ASSERT_NE(cost->cost, nullptr);
    int operators = 0, counted = 0, zero = 0;
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n) {
        const auto& v = view.nodes[n];
        if (v.kind != ViewNode::Kind::Operator || !v.proto) continue;
        ++operators;
        const NodeCost* c = cost->nodeCost(profileNameOf(*v.proto));
        ASSERT_NE(c, nullptr) << v.name;
        ASSERT_TRUE(c->shapesKnown) << v.name;
        auto heat = page->scene()->heatOfNode(n);
        ASSERT_TRUE(heat.has_value()) << v.name << " (" << v.opType << ") is not coloured";
        EXPECT_FALSE(heat->unknown);
        EXPECT_DOUBLE_EQ(heat->amount, c->figures.flops) << v.name;
        ++counted;
        if (c->figures.flops == 0) ++zero;
    }
    EXPECT_GT(zero, 0);  // the Reshapes and Transposes: coloured at the scale's pale end
    EXPECT_EQ(counted, operators);
    EXPECT_EQ(page->scene()->heatedNodeCount(), view.operatorCount);
    EXPECT_EQ(page->heatLegend()->caption(),
              QStringLiteral("%1 node(s) coloured").arg(view.operatorCount));

    // A MatMul of an input without a shape: hatched, said unknown, counted apart in the legend.
    auto model = testing::makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("unknown_shape");
    auto x = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {});
    x.mutable_type()->mutable_tensor_type()->clear_shape();
    *g.add_input() = x;
    *g.add_initializer() = testing::makeFloatInitializer("w", {4, 3});
    testing::addNode(g, "MatMul", "matmul", {"x", "w"}, {"y"});
    *g.add_input() = testing::makeValueInfo("z", onnx::TensorProto::FLOAT, {"2", "3"});
    testing::addNode(g, "Relu", "relu", {"z"}, {"r"});
    auto y = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {});
    y.mutable_type()->mutable_tensor_type()->clear_shape();
    *g.add_output() = y;
    *g.add_output() = testing::makeValueInfo("r", onnx::TensorProto::FLOAT, {"2", "3"});
    GraphPage* unknown = testing::openAndDraw(window, testing::writeModel(dir_, "u.onnx", *model));
    ASSERT_NE(unknown, nullptr);
    const int matmul = unknown->document().view->findNodeByName("matmul");
    const int relu = unknown->document().view->findNodeByName("relu");
    ASSERT_TRUE(unknown->scene()->heatOfNode(matmul).has_value());
    EXPECT_TRUE(unknown->scene()->heatOfNode(matmul)->unknown);
    EXPECT_TRUE(unknown->scene()->nodeItem(matmul)->isHeatUnknown());
    EXPECT_TRUE(unknown->scene()->nodeItem(matmul)->toolTip().contains("unknown"))
        << unknown->scene()->nodeItem(matmul)->toolTip().toStdString();
    EXPECT_FALSE(unknown->scene()->nodeItem(relu)->isHeatUnknown());
    EXPECT_DOUBLE_EQ(unknown->scene()->heatOfNode(relu)->amount, 6);
    EXPECT_EQ(unknown->heatLegend()->caption(), "1 node(s) coloured, 1 unknown (hatched)");
}

TEST_F(CostGuiTest, RooflinePointsAreTheProfiledNodesAndAClickSelectsTheNode) {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    auto* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(1);
    panel->runsSpin()->setValue(5);
    panel->threadsSpin()->setValue(1);
    panel->profileCheck()->setChecked(true);
    QSignalSpy ready(panel, &widgets::BenchmarkPanel::rooflineReady);
    panel->startAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return ready.count() == 1; }, 120000))
        << panel->statusText().toStdString();
    auto analysis = panel->roofline();
    ASSERT_NE(analysis, nullptr);
    EXPECT_GT(analysis->peak.gflops, 0) << analysis->error.toStdString();
    EXPECT_GT(analysis->bandwidth.gbPerSecond, 0) << analysis->error.toStdString();
    EXPECT_EQ(analysis->peak.threads, 1);

    // The profile table's rate for conv1 is the hand-counted FLOPs over the measured time.
    auto result = panel->result();
    const engine::NodeTimeSummary* convTime = nullptr;
    for (const auto& n : result->nodes)
        if (n.nodeName == "conv1") convTime = &n;
    ASSERT_NE(convTime, nullptr);
    auto* model = panel->profileView()->nodeModel();
    int convRow = -1;
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->keyOf(r) == "conv1") convRow = r;
    ASSERT_GE(convRow, 0);
    const double gflops = 102752 / (convTime->perRunMs * 1e-3) / 1e9;
    EXPECT_NEAR(model
                    ->data(model->index(convRow, widgets::ProfileTableModel::GflopsColumn),
                           widgets::ProfileTableModel::SortRole)
                    .toDouble(),
                gflops, 1e-9 * gflops);
    EXPECT_TRUE(panel->profileView()->peakLabel()->text().contains("MatMul"));

    // The chart: conv1 is a point; clicking it selects conv1 in the graph.
    panel->resultTabs()->setCurrentWidget(panel->rooflineChart());
    auto* chart = panel->rooflineChart();
    ASSERT_GT(chart->pointCount(), 0) << chart->caption().toStdString();
    QApplication::processEvents();
    const QPoint at = chart->pointPosition("conv1");
    ASSERT_FALSE(at.isNull());
    ASSERT_TRUE(chart->chartView()->viewport()->rect().contains(at));
    QTest::mouseClick(chart->chartView()->viewport(), Qt::LeftButton, {}, at);
    const int conv = page->shownViewGraph()->findNodeByName("conv1");
    EXPECT_TRUE(testing::waitFor([&] { return page->scene()->selectedNode() == conv; }, 5000));
}

TEST_F(CostGuiTest, SweepTabRunsTwoShapesInOneSession) {
    MainWindow window;
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    auto* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(1);
    panel->runsSpin()->setValue(3);
    panel->threadsSpin()->setValue(1);
    auto* sweep = panel->sweepTab();
    EXPECT_EQ(sweep->axesEdit()->text(), "batch=1,2,4,8");  // the model's symbol, suggested
    sweep->axesEdit()->setText("batch=1,3");
    QSignalSpy finished(sweep, &widgets::SweepTab::finished);
    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000))
        << sweep->statusText().toStdString();
    ASSERT_EQ(sweep->points().size(), 2u);
    ASSERT_EQ(sweep->table()->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
        const auto& p = sweep->points()[static_cast<std::size_t>(r)];
        ASSERT_TRUE(p.ok()) << p.error;
        const double batch = r == 0 ? 1 : 3;
        EXPECT_EQ(p.dims.at("batch"), batch);
        EXPECT_EQ(p.statistics.runs, 3);
        EXPECT_NEAR(p.itemsPerSecond, 1000.0 * batch / p.statistics.medianMs, 1e-9);
        EXPECT_EQ(sweep->table()->item(r, 0)->text(), r == 0 ? "batch=1" : "batch=3");
    }
    EXPECT_EQ(sweep->chart()->chart()->series().size(), 4);  // two lines and their dots

    // A symbol the model does not have fails with its name and the model's symbols.
    sweep->axesEdit()->setText("sequence=1,2");
    QSignalSpy failed(sweep, &widgets::SweepTab::failed);
    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() == 1; }, 60000));
    EXPECT_TRUE(sweep->statusText().contains("'sequence'"));
    EXPECT_TRUE(sweep->statusText().contains("batch"));
    // Values that are not positive integers never start.
    sweep->axesEdit()->setText("batch=1,x");
    sweep->start();
    EXPECT_FALSE(sweep->isRunning());
    EXPECT_TRUE(sweep->statusText().contains("'x' is not a positive integer"));
}

TEST_F(CostGuiTest, SweepCancelStopsIt) {
    MainWindow window;
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    auto* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(0);
    panel->runsSpin()->setValue(100000);
    panel->threadsSpin()->setValue(1);
    auto* sweep = panel->sweepTab();
    sweep->axesEdit()->setText("batch=1,2");
    QSignalSpy cancelled(sweep, &widgets::SweepTab::cancelled);
    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return sweep->progressBar()->value() > 0; }, 30000));
    sweep->cancel();
    ASSERT_TRUE(testing::waitFor([&] { return cancelled.count() == 1; }, 10000));
    EXPECT_FALSE(sweep->isRunning());
    EXPECT_TRUE(sweep->points().empty());
}

}  // namespace
}  // namespace onnxlens
