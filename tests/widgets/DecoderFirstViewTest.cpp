// The first view of a decoder export (issue 33 part 4): a decoder with a key-value cache has a
// graph input per layer and cache half (past_key_values.N.key / .value) and an output per layer
// (present.N.key / .value). They were drawn in one row of inputs across the whole drawing, with
// edges the height of the graph whose shape labels overlapped, and one such row of outputs. Each
// layer now shows its own cache inputs and outputs inside its group.
//   ONNXLENS_SCREENSHOT_DIR=DIR widgets_tests --gtest_filter='DecoderFirstView.Screenshot*'
// writes the first view (ONNXLENS_FIRST_VIEW_MODEL=model.onnx: of that model instead).
#include <gtest/gtest.h>

#include <QApplication>
#include <QSignalSpy>
#include <set>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphEdgeItem.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/graph/HeatLegend.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

using namespace testing;
constexpr auto F = onnx::TensorProto::FLOAT;
constexpr auto I64 = onnx::TensorProto::INT64;

// A decoder as torch.onnx.export writes one (name scopes /model/layers.N/..., the optimum input
// and output names): hidden 8, two heads of 4, `layers` layers, vocabulary 10.
std::shared_ptr<onnx::ModelProto> makeTorchStyleDecoder(int layers) {
    auto model = makeModelShell(13);
    auto& g = *model->mutable_graph();
    g.set_name("main_graph");
    *g.add_input() = makeValueInfo("input_ids", I64, {"batch_size", "sequence_length"});
    *g.add_input() = makeValueInfo("attention_mask", I64, {"batch_size", "total_sequence_length"});
    *g.add_input() = makeValueInfo("position_ids", I64, {"batch_size", "sequence_length"});
    for (int l = 0; l < layers; ++l)
        for (const char* half : {"key", "value"})
            *g.add_input() = makeValueInfo("past_key_values." + std::to_string(l) + "." + half, F,
                                           {"batch_size", "2", "past_sequence_length", "4"});
    *g.add_initializer() = makeFloatInitializer("model.embed_tokens.weight", {10, 8});
    *g.add_initializer() = makeFloatInitializer("model.embed_positions.weight", {64, 8});
    *g.add_initializer() = makeInt64Initializer("heads_shape", {0, 0, 2, 4});
    *g.add_initializer() = makeInt64Initializer("axes_1", {1});
    *g.add_initializer() = makeInt64Initializer("axes_2", {2});
    *g.add_initializer() = makeFloatInitializer("lm_head.weight", {8, 10});
    addNode(g, "Gather", "/model/embed_tokens/Gather", {"model.embed_tokens.weight", "input_ids"},
            {"/model/embed_tokens/Gather_output_0"});
    addNode(g, "Gather", "/model/embed_positions/Gather",
            {"model.embed_positions.weight", "position_ids"},
            {"/model/embed_positions/Gather_output_0"});
    addNode(g, "Add", "/model/Add",
            {"/model/embed_tokens/Gather_output_0", "/model/embed_positions/Gather_output_0"},
            {"/model/Add_output_0"});
    addIntAttribute(addNode(g, "Cast", "/model/Cast", {"attention_mask"}, {"/model/Cast_output_0"}),
                    "to", F);
    addNode(g, "ReduceSum", "/model/ReduceSum", {"/model/Cast_output_0", "axes_1"},
            {"/model/ReduceSum_output_0"});  // [batch, 1]
    addNode(g, "Unsqueeze", "/model/Unsqueeze", {"/model/ReduceSum_output_0", "axes_2"},
            {"/model/Unsqueeze_output_0"});  // [batch, 1, 1]
    std::string hidden = "/model/Add_output_0";
    for (int l = 0; l < layers; ++l) {
        const std::string L = "/model/layers." + std::to_string(l);
        const std::string W = "model.layers." + std::to_string(l);
        const std::string n = std::to_string(l);
        for (const char* half : {"key", "value"}) {
            const std::string h = half;
            const std::string proj = L + "/self_attn/" + h[0] + "_proj";
            *g.add_initializer() =
                makeFloatInitializer(W + ".self_attn." + h[0] + "_proj.weight", {8, 8});
            addNode(g, "MatMul", proj + "/MatMul",
                    {hidden, W + ".self_attn." + h[0] + "_proj.weight"},
                    {proj + "/MatMul_output_0"});
            addNode(g, "Reshape", L + "/self_attn/Reshape_" + h,
                    {proj + "/MatMul_output_0", "heads_shape"},
                    {L + "/self_attn/Reshape_" + h + "_output_0"});
            addIntsAttribute(addNode(g, "Transpose", L + "/self_attn/Transpose_" + h,
                                     {L + "/self_attn/Reshape_" + h + "_output_0"},
                                     {L + "/self_attn/Transpose_" + h + "_output_0"}),
                             "perm", {0, 2, 1, 3});
            addIntAttribute(addNode(g, "Concat", L + "/self_attn/Concat_" + h,
                                    {"past_key_values." + n + "." + h,
                                     L + "/self_attn/Transpose_" + h + "_output_0"},
                                    {"present." + n + "." + h}),
                            "axis", 2);
        }
        *g.add_initializer() = makeFloatInitializer(W + ".mlp.weight", {8, 8});
        addNode(g, "MatMul", L + "/mlp/MatMul", {hidden, W + ".mlp.weight"},
                {L + "/mlp/MatMul_output_0"});
        addNode(g, "Mul", L + "/self_attn/Mul",
                {L + "/mlp/MatMul_output_0", "/model/Unsqueeze_output_0"},
                {L + "/self_attn/Mul_output_0"});
        addNode(g, "Add", L + "/Add", {L + "/self_attn/Mul_output_0", hidden},
                {L + "/Add_output_0"});
        hidden = L + "/Add_output_0";
    }
    addNode(g, "MatMul", "/lm_head/MatMul", {hidden, "lm_head.weight"}, {"logits"});
    *g.add_output() = makeValueInfo("logits", F, {"batch_size", "sequence_length", "10"});
    for (int l = 0; l < layers; ++l)
        for (const char* half : {"key", "value"})
            *g.add_output() = makeValueInfo("present." + std::to_string(l) + "." + half, F,
                                            {"batch_size", "2", "total_sequence_length", "4"});
    return model;
}

TEST(DecoderFirstView, EachLayerHoldsItsCacheInputsAndTheLabelsDoNotOverlap) {
    QTemporaryDir dir;
    const QString path = writeModel(dir, "decoder.onnx", *makeTorchStyleDecoder(6));
    gui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    auto* page = openAndDraw(window, path);
    ASSERT_NE(page, nullptr);
    auto* scene = page->scene();
    const auto& view = scene->view();

    // The graph inputs drawn in the top row are the three the layers share; each cache input
    // is in the group of the layer that reads it, each present output in the one that writes it.
    std::set<std::string> topInputs;
    for (std::size_t n = 0; n < view.nodes.size(); ++n) {
        const auto& node = view.nodes[n];
        if (node.kind == ViewNode::Kind::Operator) continue;
        if (node.group == 0) {
            if (node.kind == ViewNode::Kind::Input) topInputs.insert(node.name);
            continue;
        }
        const std::string layer = node.name.substr(node.name.find('.') + 1, 1);
        const std::string& home = view.groups[node.group].path;
        EXPECT_EQ(home.rfind("/model/layers." + layer + "/", 0), 0u) << node.name << " in " << home;
    }
    EXPECT_EQ(topInputs, (std::set<std::string>{"input_ids", "attention_mask", "position_ids"}));

    // No two shape labels overlap; every group shown holds something and shows its whole title.
    std::vector<QRectF> labels;
    for (auto* edge : scene->edgeItems())
        if (edge->isLabelled() && !edge->labelText().isEmpty())
            labels.push_back(edge->mapRectToScene(edge->labelRect()));
    ASSERT_FALSE(labels.empty());
    for (std::size_t a = 0; a < labels.size(); ++a)
        for (std::size_t b = a + 1; b < labels.size(); ++b)
            EXPECT_FALSE(labels[a].intersects(labels[b]))
                << "labels " << a << " and " << b << " overlap at " << labels[a].x() << ","
                << labels[a].y();
    int groupsShown = 0;
    for (int g = 1; g < static_cast<int>(view.groups.size()); ++g) {
        auto* item = scene->groupItem(g);
        if (!item) continue;
        ++groupsShown;
        const auto& group = view.groups[g];
        EXPECT_FALSE(group.children.empty()) << group.path;
        EXPECT_GT(group.nodeCount, 0) << group.path;
        EXPECT_TRUE(group.path.size() > group.title.size() &&
                    group.path.compare(group.path.size() - group.title.size(), group.title.size(),
                                       group.title) == 0)
            << group.path << " titled " << group.title;
        EXPECT_EQ(item->shownTitle().toStdString(), group.title) << group.path;
    }
    EXPECT_GE(groupsShown, 6);

    // The first view opens on the shared inputs at a legible zoom.
    QApplication::processEvents();
    auto* graph = page->view();
    const QRectF shown = graph->mapToScene(graph->viewport()->rect()).boundingRect();
    EXPECT_TRUE(shown.intersects(scene->inputsRect()));
    EXPECT_GE(graph->zoom(), 0.5);
}

TEST(DecoderFirstView, ScreenshotOfTheFirstView) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshot";
    QTemporaryDir dir;
    QString model = qEnvironmentVariable("ONNXLENS_FIRST_VIEW_MODEL");
    if (model.isEmpty()) model = writeModel(dir, "decoder.onnx", *makeTorchStyleDecoder(6));
    gui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    auto* page = openAndDraw(window, model);
    ASSERT_NE(page, nullptr);
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-decoder-first-view.png"));
}

// ONNXLENS_SCREENSHOT_DIR=DIR: Colour by FLOPs on a BERT-like export after a Run at sequence 128,
// the figures and the legend saying the dims they were counted at.
TEST(DecoderFirstView, ScreenshotOfFlopsAtTheRunsDims) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshot";
    QTemporaryDir dir;
    gui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    auto* page = openAndDraw(window, writeModel(dir, "bert.onnx", *makeTransformerLike(2, 64)));
    ASSERT_NE(page, nullptr);
    window.colourByFlopsAction()->trigger();
    auto* run = window.runPanel();
    ASSERT_TRUE(waitFor([&] { return run->isReady(); }, 60000));
    run->setSymbolValue("sequence", 128);
    QSignalSpy changed(page->controller(), &widgets::ModelController::costChanged);
    run->runAction()->trigger();
    ASSERT_TRUE(waitFor([&] { return changed.count() == 1; }, 60000));
    const int matmul =
        page->document().view->findNodeByName("/encoder/layer.0/attention/self/MatMul");
    ASSERT_GE(matmul, 0);
    page->revealNode(matmul);
    ASSERT_TRUE(waitFor([&] { return page->scene()->selectedNode() == matmul; }));
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-flops-at-run-dims.png"));
}

}  // namespace
}  // namespace onnxlens
