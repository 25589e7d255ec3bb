#include <gtest/gtest.h>

#include <filesystem>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;
namespace fs = std::filesystem;

namespace {

// Runs a model with and without the optimizer on the same seeded inputs; outputs must agree.
void expectSameOutputs(const onnx::ModelProto& model) {
    LoadedModel loaded;
    loaded.path = "optimizer-test.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions plain, optimized;
    plain.optimize = false;
    auto a = engine::Session::create(loaded, plain);
    auto b = engine::Session::create(loaded, optimized);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    auto feeds = engine::prepareFeeds((*a)->inputs(), {}, {}, 42);
    ASSERT_TRUE(feeds);
    auto ra = (*a)->run(*feeds);
    auto rb = (*b)->run(*feeds);
    ASSERT_TRUE(ra) << ra.error().message;
    ASSERT_TRUE(rb) << rb.error().message;
    ASSERT_EQ(ra->size(), rb->size());
    for (std::size_t i = 0; i < ra->size(); ++i)
        EXPECT_TRUE(tensorsClose((*rb)[i].tensor(), (*ra)[i].tensor(), {1e-4, 1e-5}));
}

}  // namespace

TEST(GraphOptimizer, IdentityIsRemovedButGraphOutputsKeepTheirNames) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 3});
    addNode(g, "Identity", {"x"}, {"a"});
    addNode(g, "Relu", {"a"}, {"b"});
    addNode(g, "Identity", {"b"}, {"y"});
    g.add_output()->set_name("y");
    onnx::GraphProto copy = g;
    EXPECT_EQ(engine::eliminateIdentityNodes(copy), 1);
    ASSERT_EQ(copy.node_size(), 2);
    EXPECT_EQ(copy.node(0).input(0), "x");
    EXPECT_EQ(copy.node(1).output(0), "y");
    expectSameOutputs(m);
}

TEST(GraphOptimizer, InferenceDropoutIsRemovedTrainingDropoutIsNot) {
    auto m = emptyModel(13);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {4});
    addNode(g, "Dropout", {"x"}, {"a"});
    addNode(g, "Dropout", {"a", "", "t"}, {"b"});
    addNode(g, "Relu", {"b"}, {"y"});
    g.add_output()->set_name("y");
    EXPECT_EQ(engine::eliminateInferenceDropout(g, 13), 1);
    EXPECT_EQ(g.node_size(), 2);
    EXPECT_EQ(g.node(0).input(0), "x");
}

TEST(GraphOptimizer, ConstantChainsFoldIntoOneInitializer) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 2});
    addInitializer(g, "c1", makeTensor<float>({2, 2}, {1, 2, 3, 4}));
    addInitializer(g, "c2", makeTensor<float>({2, 2}, {10, 20, 30, 40}));
    addNode(g, "Add", {"c1", "c2"}, {"s"});  // constant
    addNode(g, "Relu", {"s"}, {"r"});        // constant through the chain
    addNode(g, "Mul", {"x", "r"}, {"y"});    // depends on the input
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::foldConstants(copy, {}), 2);
    ASSERT_EQ(copy.graph().node_size(), 1);
    EXPECT_EQ(copy.graph().node(0).op_type(), "Mul");
    // c1 and c2 are no longer read: dropped.
    for (const auto& init : copy.graph().initializer()) EXPECT_NE(init.name(), "c1");
    expectSameOutputs(m);
}

TEST(GraphOptimizer, ShapeOfStaticValueFoldsSoReshapeTargetsAreConstant) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 3, 4});
    addNode(g, "Shape", {"x"}, {"s"});
    addNode(g, "Reshape", {"x", "s"}, {"y"});
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_GE(engine::foldConstants(copy, {}), 1);
    ASSERT_EQ(copy.graph().node_size(), 1);
    EXPECT_EQ(copy.graph().node(0).op_type(), "Reshape");
    expectSameOutputs(m);
}

TEST(GraphOptimizer, InitializerThatIsAlsoAnInputIsNotAConstant) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2});
    addFloatInput(g, "bias", {2});
    addInitializer(g, "bias", makeTensor<float>({2}, {1, 2}));
    addNode(g, "Neg", {"bias"}, {"nb"});
    addNode(g, "Add", {"x", "nb"}, {"y"});
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::foldConstants(copy, {}), 0);
}

TEST(GraphOptimizer, BatchNormFoldsIntoConvAndComputesTheSame) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 2, 5, 5});
    std::vector<float> w(3 * 2 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
    addInitializer(g, "w", makeTensor<float>({3, 2, 3, 3}, w));
    addInitializer(g, "b", makeTensor<float>({3}, {0.1f, -0.2f, 0.3f}));
    addInitializer(g, "scale", makeTensor<float>({3}, {1.5f, 0.5f, -1.0f}));
    addInitializer(g, "shift", makeTensor<float>({3}, {0.2f, 0.0f, 1.0f}));
    addInitializer(g, "mean", makeTensor<float>({3}, {0.3f, -0.1f, 0.05f}));
    addInitializer(g, "var", makeTensor<float>({3}, {0.9f, 2.0f, 0.25f}));
    auto* conv = addNode(g, "Conv", {"x", "w", "b"}, {"c"});
    setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    addNode(g, "BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"});
    g.add_output()->set_name("y");
    onnx::GraphProto copy = g;
    EXPECT_EQ(engine::foldBatchNormIntoConv(copy, {}), 1);
    ASSERT_EQ(copy.node_size(), 1);
    EXPECT_EQ(copy.node(0).op_type(), "Conv");
    EXPECT_EQ(copy.node(0).output(0), "y");
    expectSameOutputs(m);
}

namespace {

// x [1, 4, 6, 6] -> Conv (4 -> 4, 3x3, pad 1) with deterministic weights.
void addConv(onnx::GraphProto& g, const std::string& x, const std::string& out,
             const std::string& prefix) {
    std::vector<float> w(4 * 4 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.03f * static_cast<float>(i % 11) - 0.15f;
    addInitializer(g, prefix + "_w", makeTensor<float>({4, 4, 3, 3}, w));
    addInitializer(g, prefix + "_b", makeTensor<float>({4}, {0.1f, -0.2f, 0.3f, -0.05f}));
    auto* conv = addNode(g, "Conv", {x, prefix + "_w", prefix + "_b"}, {out});
    setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
}

std::string attributeString(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return a.s();
    return {};
}

}  // namespace

TEST(GraphOptimizer, ResidualConvAddReluBecomesOneFusedConv) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addConv(g, "x", "c", "conv");
    addNode(g, "Add", {"x", "c"}, {"s"});  // the residual: Z is the block's input
    addNode(g, "Relu", {"s"}, {"y"});
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::fuseConvAdd(copy), 1);
    EXPECT_EQ(engine::fuseConvActivation(copy), 1);
    ASSERT_EQ(copy.graph().node_size(), 1);
    const auto& fused = copy.graph().node(0);
    EXPECT_EQ(fused.domain(), engine::kOnnxlensDomain);
    EXPECT_EQ(fused.op_type(), "FusedConv");
    ASSERT_EQ(fused.input_size(), 4);
    EXPECT_EQ(fused.input(3), "x");
    EXPECT_EQ(fused.output(0), "y");
    EXPECT_EQ(attributeString(fused, "activation"), "Relu");
    bool imported = false;
    for (const auto& imp : copy.opset_import())
        imported = imported || imp.domain() == engine::kOnnxlensDomain;
    EXPECT_TRUE(imported);
    expectSameOutputs(m);
}

TEST(GraphOptimizer, ConvClipFusesWithItsConstantBounds) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addConv(g, "x", "c", "conv");
    addInitializer(g, "lo", Tensor::scalar<float>(0.0f));
    addInitializer(g, "hi", Tensor::scalar<float>(0.2f));
    addNode(g, "Clip", {"c", "lo", "hi"}, {"y"});
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::fuseConvActivation(copy), 1);
    ASSERT_EQ(copy.graph().node_size(), 1);
    EXPECT_EQ(attributeString(copy.graph().node(0), "activation"), "Clip");
    expectSameOutputs(m);
}

TEST(GraphOptimizer, ConvOutputReadTwiceOrBroadcastAddIsNotFused) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addFloatInput(g, "row", {6});
    addConv(g, "x", "c", "conv");
    addNode(g, "Relu", {"c"}, {"r"});
    addNode(g, "Sigmoid", {"c"}, {"s"});  // a second reader of the Conv output
    addConv(g, "x", "d", "conv2");
    addNode(g, "Add", {"d", "row"}, {"e"});  // Z broadcasts: not a FusedConv sum
    g.add_output()->set_name("r");
    g.add_output()->set_name("s");
    g.add_output()->set_name("e");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::fuseConvAdd(copy), 0);
    EXPECT_EQ(engine::fuseConvActivation(copy), 0);
    EXPECT_EQ(copy.graph().node_size(), 5);
    expectSameOutputs(m);
}

TEST(GraphOptimizer, SampleModelsComputeTheSameOptimized) {
    for (const char* name :
         {"mnist_cnn", "tiny_bert", "lstm_classifier", "legacy_opset10", "squeezenet1_1"}) {
        SCOPED_TRACE(name);
        auto loaded = loadModel(fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / name /
                                "model.onnx");
        ASSERT_TRUE(loaded) << loaded.error().message;
        expectSameOutputs(*loaded->proto);
    }
}

TEST(GraphOptimizer, HardSwishAndHardSigmoidFuseIntoTheConv) {
    // MobileNetV3's activations: the fused kernels (oneDNN post-ops, or the loop after Eigen)
    // compute what the separate nodes do, in plain and channel-blocked layouts.
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addConv(g, "x", "c", "conv");
    addNode(g, "HardSwish", {"c"}, {"h"});
    addConv(g, "h", "d", "conv2");
    auto* hs = addNode(g, "HardSigmoid", {"d"}, {"y"});
    setAttr(*hs, "alpha", 0.3f);
    setAttr(*hs, "beta", 0.4f);
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::fuseConvActivation(copy), 2);
    ASSERT_EQ(copy.graph().node_size(), 2);
    EXPECT_EQ(attributeString(copy.graph().node(0), "activation"), "HardSwish");
    EXPECT_EQ(attributeString(copy.graph().node(1), "activation"), "HardSigmoid");
    expectSameOutputs(m);
    // The inputs are scaled up so that every piece of both activations is reached.
    for (auto& init : *m.mutable_graph()->mutable_initializer()) {
        Tensor t = engine::tensorFromProto(init, {});
        for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= 8.0f;
        init = engine::tensorToProto(t, init.name());
    }
    expectSameOutputs(m);
}

TEST(GraphOptimizer, ConvSiluBecomesOneFusedConvWithASwishEpilogue) {
    // YOLO- and EfficientNet-style blocks: Conv, then x * Sigmoid(x) in either operand order;
    // fuse-silu makes the pair a QuickGelu, the conv fusion takes it as a Swish epilogue (oneDNN's
    // eltwise_swish, or the loop after Eigen), in plain and channel-blocked layouts.
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addConv(g, "x", "c", "conv");
    addNode(g, "Sigmoid", {"c"}, {"cs"});
    addNode(g, "Mul", {"c", "cs"}, {"h"});
    addConv(g, "h", "d", "conv2");
    addNode(g, "Sigmoid", {"d"}, {"ds"});
    addNode(g, "Mul", {"ds", "d"}, {"y"});
    g.add_output()->set_name("y");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::fuseSilu(copy), 2);
    EXPECT_EQ(engine::fuseConvActivation(copy), 2);
    ASSERT_EQ(copy.graph().node_size(), 2);
    for (const auto& n : copy.graph().node()) {
        EXPECT_EQ(n.op_type(), "FusedConv");
        EXPECT_EQ(attributeString(n, "activation"), "Swish");
    }
    expectSameOutputs(m);
    // Large magnitudes reach both tails (e^(-alpha x) overflowing and vanishing).
    for (auto& init : *m.mutable_graph()->mutable_initializer()) {
        Tensor t = engine::tensorFromProto(init, {});
        for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= 40.0f;
        init = engine::tensorToProto(t, init.name());
    }
    expectSameOutputs(m);
}
