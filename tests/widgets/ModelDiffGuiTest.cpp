// Tools > Compare Models, offscreen: the sample CNN against a copy with one weight changed deep in
// it and one attribute spelled out: the structure's differences coloured on the graph with their
// legend, the runs compared on a worker thread, View > Colour by Error painting each node by the
// SQNR of its output, and First Divergence selecting the planted node. Before any Qt header:
// Session.h (through NumericDiff.h) has a member named `slots`.
#include "onnxlens/workflows/NumericDiff.h"
//
#include <gtest/gtest.h>

#include <QDockWidget>
#include <QPushButton>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/NodeNames.h"
#include "widgets/graph/DiffLegend.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/QuantizationLegend.h"
#include "widgets/panels/ModelDiffPanel.h"

namespace onnxlens {
namespace {

using gui::MainWindow;

QString sample(const char* name) {
    return QString::fromStdString(std::string(ONNXLENS_SOURCE_DIR) + "/resources/samples/" + name +
                                  "/model.onnx");
}

int viewNodeOf(const widgets::GraphScene& scene, const std::string& profileName) {
    const auto& nodes = scene.view().nodes;
    for (std::size_t n = 0; n < nodes.size(); ++n)
        if (nodes[n].proto && profileNameOf(*nodes[n].proto) == profileName)
            return static_cast<int>(n);
    return -1;
}

TEST(ModelDiffGuiTest, ComparesModelsColoursDifferencesAndFindsTheFirstDivergence) {
    testing::clearSettings();
    QTemporaryDir dir;
    auto loaded = loadModel(sample("mnist_cnn").toStdString());
    ASSERT_TRUE(loaded.ok());
    onnx::ModelProto changed = *loaded->proto;
    auto& g = *changed.mutable_graph();
    int firstConv = -1, lastConv = -1;
    for (int i = 0; i < g.node_size(); ++i)
        if (g.node(i).op_type() == "Conv") (firstConv < 0 ? firstConv : lastConv) = i;
    ASSERT_GE(lastConv, 0);
    // The deep Conv's weight: one element moved by 0.5.
    const std::string weight = g.node(lastConv).input(1);
    for (auto& init : *g.mutable_initializer()) {
        if (init.name() != weight) continue;
        engine::Tensor t = engine::tensorFromProto(init);
        t.data<float>()[3] += 0.5f;
        init = engine::tensorToProto(t, weight);
    }
    // The first Conv's default padding spelled out: a changed node, the same numbers.
    auto* pad = g.mutable_node(firstConv)->add_attribute();
    pad->set_name("auto_pad");
    pad->set_type(onnx::AttributeProto::STRING);
    pad->set_s("NOTSET");
    const QString other = testing::writeModel(dir, "changed.onnx", changed);
    const std::string firstConvName = profileNameOf(g.node(firstConv));
    const std::string lastConvName = profileNameOf(g.node(lastConv));

    MainWindow window;
    window.resize(1400, 900);
    window.show();
    auto* page = testing::openAndDraw(window, sample("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    window.compareCurrentWith(other);
    EXPECT_TRUE(window.modelDiffDock()->isVisible());
    ASSERT_TRUE(
        testing::waitFor([&] { return window.modelDiffPanel()->comparison() != nullptr; }, 60000));
    const auto comparison = window.modelDiffPanel()->comparison();
    EXPECT_EQ(comparison->structure.changed, 1);
    ASSERT_EQ(comparison->structure.initializers.size(), 1u);
    EXPECT_EQ(comparison->structure.initializers[0].nameA, weight);
    ASSERT_TRUE(comparison->numeric.has_value()) << comparison->numericError.toStdString();

    // The structure on the graph: the first Conv changed, the rest plain; a legend with counts.
    ASSERT_TRUE(page->hasStructureDiff());
    auto* scene = page->scene();
    const int firstConvNode = viewNodeOf(*scene, firstConvName);
    ASSERT_GE(firstConvNode, 0);
    ASSERT_TRUE(scene->markOfNode(firstConvNode).has_value());
    EXPECT_EQ(scene->markOfNode(firstConvNode)->colour, widgets::changedNodeColour());
    EXPECT_TRUE(scene->markOfNode(firstConvNode)->toolTip.contains(QStringLiteral("auto_pad")));
    EXPECT_EQ(scene->nodeItem(firstConvNode)->heatColour(), widgets::changedNodeColour());
    EXPECT_TRUE(page->diffLegend()->isVisible());
    EXPECT_TRUE(page->diffLegend()->caption().startsWith(QStringLiteral("1 changed")));

    // The runs: the deep Conv is where they part ways.
    const auto& numeric = *comparison->numeric;
    ASSERT_GE(numeric.firstDivergence, 0);
    EXPECT_EQ(numeric.tensors[numeric.firstDivergence].nodeNameA, lastConvName);
    EXPECT_TRUE(
        window.modelDiffPanel()->reportText().contains(QStringLiteral("first divergence: ")));
    ASSERT_TRUE(window.modelDiffPanel()->firstDivergenceButton()->isEnabled());

    // View > Colour by Error: every compared node by its SQNR, figures in the tooltip.
    window.colourByErrorAction()->setChecked(true);
    ASSERT_TRUE(page->hasQuantizationError());
    EXPECT_FALSE(page->hasStructureDiff());
    EXPECT_TRUE(page->quantizationLegend()->isVisible());
    EXPECT_TRUE(page->quantizationLegend()->caption().contains(QStringLiteral("compared")));
    const auto sqnr = engine::sqnrByNode(numeric);
    const int lastConvNode = viewNodeOf(*scene, lastConvName);
    ASSERT_GE(lastConvNode, 0);
    ASSERT_TRUE(sqnr.count(lastConvName));
    EXPECT_EQ(scene->nodeItem(lastConvNode)->heatColour(),
              widgets::sqnrColour(sqnr.at(lastConvName)));
    EXPECT_TRUE(scene->nodeItem(lastConvNode)->toolTip().contains(QStringLiteral("SQNR")));
    // Nodes before the divergence agree exactly: their SQNR is infinite (green).
    EXPECT_EQ(sqnr.at(firstConvName), std::numeric_limits<double>::infinity());

    // First Divergence selects (and centres) the deep Conv.
    scene->clearSelection();
    window.firstDivergenceAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return scene->selectedNode() == lastConvNode; }));
    // The Model Diff dock shows both versions of the selected node with its figures.
    ASSERT_TRUE(testing::waitFor([&] {
        return window.modelDiffPanel()->nodeText().contains(QStringLiteral("B (changed.onnx"));
    }));
    EXPECT_TRUE(window.modelDiffPanel()->nodeText().contains(QStringLiteral("SQNR")));

    if (const char* shots = std::getenv("ONNXLENS_SCREENSHOT_DIR"))
        window.grab().save(QString::fromLocal8Bit(shots) + "/screenshot-model-diff.png");

    // Back to the structure when the error colouring is switched off.
    window.colourByErrorAction()->setChecked(false);
    EXPECT_TRUE(page->hasStructureDiff());
    EXPECT_FALSE(page->hasQuantizationError());
}

TEST(ModelDiffGuiTest, CancelStopsTheComparison) {
    testing::clearSettings();
    MainWindow window;
    window.show();
    auto* page = testing::openAndDraw(window, sample("mnist_cnn"));
    ASSERT_NE(page, nullptr);
    window.compareCurrentWith(sample("mnist_cnn"));
    window.modelDiffPanel()->cancelButton()->click();
    // Either cancelled before the end or finished first (a small model): never stuck.
    ASSERT_TRUE(testing::waitFor(
        [&] {
            return window.modelDiffPanel()->comparison() != nullptr ||
                   !window.modelDiffPanel()->cancelButton()->isVisible();
        },
        60000));
}

}  // namespace
}  // namespace onnxlens
