// The cost model on one-node models whose counts are worked out by hand in each test.
#include <gtest/gtest.h>

#include "SyntheticModels.h"
#include "onnxlens/model/CostModel.h"

namespace onnxlens {
namespace {

using testing::makeFloatInitializer;
using testing::makeValueInfo;

constexpr int kFloat = onnx::TensorProto::FLOAT;

struct OneNode {
    onnx::ModelProto model;
    onnx::NodeProto* node;
};

OneNode oneNodeModel(const std::string& op, const std::vector<onnx::ValueInfoProto>& inputs,
                     const std::vector<onnx::TensorProto>& weights, int opset = 17) {
    OneNode m;
    m.model.set_ir_version(8);
    auto* o = m.model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    auto* g = m.model.mutable_graph();
    g->set_name("g");
    m.node = g->add_node();
    m.node->set_op_type(op);
    m.node->set_name("/block.1/layer/" + op);
    for (const auto& in : inputs) {
        *g->add_input() = in;
        m.node->add_input(in.name());
    }
    for (const auto& w : weights) {
        *g->add_initializer() = w;
        m.node->add_input(w.name());
    }
    m.node->add_output("y");
    g->add_output()->set_name("y");
    return m;
}

void addInts(onnx::NodeProto* node, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}
void addInt(onnx::NodeProto* node, const std::string& name, std::int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
void addString(onnx::NodeProto* node, const std::string& name, const std::string& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

TEST(CostModel, GroupedConvWithBiasCountsOneDotProductPerOutputElement) {
    // X [1, 8, 10, 10], W [16, 4, 3, 3] (group 2), pads 1: Y [1, 16, 10, 10].
    // MACs = 16 * 10 * 10 outputs x (8 / 2) channels x 3 x 3 = 57,600; FLOPs = 2 x MACs + 1,600
    // bias adds.
    auto m =
        oneNodeModel("Conv", {makeValueInfo("x", kFloat, {"1", "8", "10", "10"})},
                     {makeFloatInitializer("w", {16, 4, 3, 3}), makeFloatInitializer("b", {16})});
    addInt(m.node, "group", 2);
    addInts(m.node, "pads", {1, 1, 1, 1});
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost) << cost.error().message;
    ASSERT_EQ(cost->nodes.size(), 1u);
    const auto& f = cost->nodes[0].figures;
    EXPECT_DOUBLE_EQ(f.macs, 57600);
    EXPECT_DOUBLE_EQ(f.flops, 2 * 57600 + 1600);
    EXPECT_EQ(f.parameters, 16u * 4 * 9 + 16);
    EXPECT_EQ(f.parameterBytes, (16u * 4 * 9 + 16) * 4);
    EXPECT_EQ(f.bytesRead, 8u * 100 * 4);
    EXPECT_EQ(f.bytesWritten, 16u * 100 * 4);
    EXPECT_NEAR(f.intensity(), f.flops / double(f.bytesRead + f.bytesWritten + f.parameterBytes),
                1e-12);
    EXPECT_EQ(cost->nodes[0].scope, "/block.1/layer");
    EXPECT_DOUBLE_EQ(cost->scopes.at("/block.1").macs, 57600);
    EXPECT_DOUBLE_EQ(cost->total.macs, 57600);
}

TEST(CostModel, ChannelsLastQLinearConvOfTheOptimizerCountsLikeQLinearConv) {
    // The optimizer's com.onnxlens QLinearConvChannelsLast: X [1, 10, 10, 8] (channels last),
    // W [16, 4, 3, 3] as input 3 (group 2), Y [1, 10, 10, 16]: 1,600 outputs x 4 x 3 x 3 MACs.
    auto m = oneNodeModel("QLinearConvChannelsLast",
                          {makeValueInfo("x", kFloat, {"1", "10", "10", "8"})},
                          {makeFloatInitializer("x_scale", {}), makeFloatInitializer("x_zp", {}),
                           makeFloatInitializer("w", {16, 4, 3, 3})});
    m.node->set_domain("com.onnxlens");
    addInt(m.node, "group", 2);
    *m.model.mutable_graph()->mutable_output(0) =
        makeValueInfo("y", kFloat, {"1", "10", "10", "16"});
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost) << cost.error().message;
    ASSERT_EQ(cost->nodes.size(), 1u);
    EXPECT_DOUBLE_EQ(cost->nodes[0].figures.macs, 1600.0 * 4 * 9);
}

TEST(CostModel, OptimizerPackedMatMulCountsFromItsInputAndN) {
    // The optimizer's com.onnxlens PackedMatMul in a saved optimized model: A [2, 16, 96], packed
    // weights [3, 96, 1, 48] holding K 96 x N 130, a bias of 130: 32 rows x 96 x 130 MACs, plus
    // one add a output. The output's shape (no schema) is not needed.
    auto m = oneNodeModel(
        "PackedMatMul", {makeValueInfo("a", kFloat, {"2", "16", "96"})},
        {makeFloatInitializer("packed", {3, 96, 1, 48}), makeFloatInitializer("bias", {130})});
    m.node->set_domain("com.onnxlens");
    addInt(m.node, "k", 96);
    addInt(m.node, "n", 130);
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost) << cost.error().message;
    ASSERT_EQ(cost->nodes.size(), 1u);
    EXPECT_TRUE(cost->nodes[0].shapesKnown);
    EXPECT_DOUBLE_EQ(cost->nodes[0].figures.macs, 32.0 * 96 * 130);
    EXPECT_DOUBLE_EQ(cost->nodes[0].figures.flops, 2 * 32.0 * 96 * 130 + 32.0 * 130);
}

TEST(CostModel, OptimizerOperatorsWithoutARuleAreUnknownNotZero) {
    // A channel-blocked convolution (its blocked shapes unknown to shape inference) and the
    // packed Attention have no counting rule: unknown, said so, and the totals a lower bound; a
    // layout reorder only moves bytes (0 FLOPs, counted).
    for (const char* op : {"BlockedConv", "BlockedMaxPool", "Attention", "BlockedChannelScale"}) {
        SCOPED_TRACE(op);
        auto m = oneNodeModel(op, {makeValueInfo("x", kFloat, {"1", "2", "8", "8", "16"})},
                              {makeFloatInitializer("w", {32, 32, 3, 3})});
        m.node->set_domain("com.onnxlens");
        auto cost = computeModelCost(m.model);
        ASSERT_TRUE(cost) << cost.error().message;
        ASSERT_EQ(cost->nodes.size(), 1u);
        EXPECT_FALSE(cost->nodes[0].shapesKnown);
        EXPECT_EQ(cost->nodes[0].note, std::string("no counting rule for com.onnxlens::") + op);
        EXPECT_EQ(cost->nodesWithUnknownShapes, 1);
    }
    auto reorder =
        oneNodeModel("ReorderToBlocked", {makeValueInfo("x", kFloat, {"1", "24", "8", "8"})}, {});
    reorder.node->set_domain("com.onnxlens");
    addInt(reorder.node, "block", 16);
    auto cost = computeModelCost(reorder.model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_TRUE(cost->nodes[0].shapesKnown);
    EXPECT_DOUBLE_EQ(cost->nodes[0].figures.flops, 0.0);
    EXPECT_GT(cost->nodes[0].figures.bytesRead, 0u);
}

TEST(CostModel, BatchedMatMulWithSymbolicDimsBoundByTheUser) {
    // [batch, 12, seq, 64] x [batch, 12, 64, seq], batch 2, seq 128:
    // MACs = 2 x 12 x 128 x 128 outputs x 64 = 25,165,824.
    auto m = oneNodeModel("MatMul",
                          {makeValueInfo("q", kFloat, {"batch", "12", "seq", "64"}),
                           makeValueInfo("k", kFloat, {"batch", "12", "64", "seq"})},
                          {});
    auto cost = computeModelCost(m.model, {{"batch", 2}, {"seq", 128}});
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_DOUBLE_EQ(cost->total.macs, 2.0 * 12 * 128 * 128 * 64);
    EXPECT_EQ(cost->dims.at("seq"), 128);
    EXPECT_TRUE(cost->assumptions.empty());
    // Unbound symbols are taken as 1 and said so.
    auto unbound = computeModelCost(m.model);
    ASSERT_TRUE(unbound);
    EXPECT_DOUBLE_EQ(unbound->total.macs, 12.0 * 64);
    EXPECT_EQ(unbound->assumptions.size(), 2u);
}

TEST(CostModel, GemmWithTransposedAAndBias) {
    // A [256, 32] transposed: M = 32, K = 256; B [256, 10]: Y [32, 10]. MACs 32 x 10 x 256.
    auto m = oneNodeModel("Gemm", {makeValueInfo("a", kFloat, {"256", "32"})},
                          {makeFloatInitializer("bw", {256, 10}), makeFloatInitializer("c", {10})});
    addInt(m.node, "transA", 1);
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost);
    EXPECT_DOUBLE_EQ(cost->total.macs, 32.0 * 10 * 256);
    EXPECT_DOUBLE_EQ(cost->total.flops, 2.0 * 32 * 10 * 256 + 320);
    EXPECT_EQ(cost->total.parameters, 2570u);
}

TEST(CostModel, ConvTransposeScattersEachInputOverTheKernel) {
    // X [1, 4, 5, 5], W [4, 3, 2, 2]: MACs = 100 input elements x 3 x 2 x 2 = 1,200.
    auto m = oneNodeModel("ConvTranspose", {makeValueInfo("x", kFloat, {"1", "4", "5", "5"})},
                          {makeFloatInitializer("w", {4, 3, 2, 2})});
    addInts(m.node, "strides", {2, 2});
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost);
    EXPECT_DOUBLE_EQ(cost->total.macs, 1200);
}

TEST(CostModel, EinsumCountsEveryIndexCombination) {
    // "bij,bjk->bik" with b 3, i 4, j 5, k 6: 3 x 4 x 5 x 6 = 360 MACs.
    auto m = oneNodeModel(
        "Einsum",
        {makeValueInfo("a", kFloat, {"3", "4", "5"}), makeValueInfo("b", kFloat, {"3", "5", "6"})},
        {});
    addString(m.node, "equation", "bij,bjk->bik");
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost);
    EXPECT_DOUBLE_EQ(cost->total.macs, 360);
}

TEST(CostModel, BidirectionalLstmPerStepTimesSequenceLength) {
    // X [7, 2, 10] (seq 7, batch 2, input 10), hidden 16, bidirectional:
    // MACs = 2 dirs x 7 x 2 x 4 gates x 16 x (10 + 16) = 46,592; FLOPs add 12 per hidden unit and
    // step.
    auto m = oneNodeModel(
        "LSTM", {makeValueInfo("x", kFloat, {"7", "2", "10"})},
        {makeFloatInitializer("w", {2, 64, 10}), makeFloatInitializer("r", {2, 64, 16})});
    addInt(m.node, "hidden_size", 16);
    addString(m.node, "direction", "bidirectional");
    auto cost = computeModelCost(m.model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_DOUBLE_EQ(cost->total.macs, 2.0 * 7 * 2 * 4 * 16 * 26);
    EXPECT_DOUBLE_EQ(cost->total.flops, 2 * 46592.0 + 2.0 * 7 * 2 * 16 * 12);
}

TEST(CostModel, PoolingElementwiseAndSoftmaxAreCountedAsOperations) {
    auto pool = oneNodeModel("MaxPool", {makeValueInfo("x", kFloat, {"1", "2", "8", "8"})}, {});
    addInts(pool.node, "kernel_shape", {2, 2});
    addInts(pool.node, "strides", {2, 2});
    auto p = computeModelCost(pool.model);
    ASSERT_TRUE(p);
    EXPECT_DOUBLE_EQ(p->total.flops, 2.0 * 4 * 4 * 4);  // 32 outputs x 4-element window
    EXPECT_DOUBLE_EQ(p->total.macs, 0);

    auto add = oneNodeModel(
        "Add", {makeValueInfo("a", kFloat, {"4", "5"}), makeValueInfo("b", kFloat, {"5"})}, {});
    auto a = computeModelCost(add.model);
    ASSERT_TRUE(a);
    EXPECT_DOUBLE_EQ(a->total.flops, 20);
    EXPECT_EQ(a->total.bytesRead, (20u + 5) * 4);

    auto softmax = oneNodeModel("Softmax", {makeValueInfo("x", kFloat, {"2", "10"})}, {});
    auto s = computeModelCost(softmax.model);
    ASSERT_TRUE(s);
    EXPECT_DOUBLE_EQ(s->total.flops, 60);  // 3 per element: exp, sum, divide
}

TEST(CostModel, SharedWeightsCountOnceInTheTotalAndPeakMemoryFollowsLiveness) {
    // y1 = x * w, y2 = y1 * w, y = y2 + x: w (100 floats) read twice, counted once.
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    auto* g = model.mutable_graph();
    *g->add_input() = makeValueInfo("x", kFloat, {"100"});
    *g->add_initializer() = makeFloatInitializer("w", {100});
    auto node = [&](const char* op, const char* a, const char* b, const char* y) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(y);
        n->add_input(a);
        n->add_input(b);
        n->add_output(y);
    };
    node("Mul", "x", "w", "y1");
    node("Mul", "y1", "w", "y2");
    node("Add", "y2", "x", "y");
    g->add_output()->set_name("y");
    auto cost = computeModelCost(model);
    ASSERT_TRUE(cost);
    EXPECT_EQ(cost->total.parameters, 100u);
    EXPECT_EQ(cost->nodes[0].figures.parameters + cost->nodes[1].figures.parameters, 200u);
    EXPECT_EQ(cost->parametersByType.at("float32").parameterBytes, 400u);
    // Live: x (400 B) all along; after y1 400 more; after y2 x + y1 + y2 = 1,200 at most; y1
    // dies after y2's node, then y = x + y2 + y = 1,200.
    EXPECT_EQ(cost->peakActivationBytes, 1200u);
}

TEST(CostModel, LoopWithAConstantTripCountCountsItsBodyThatManyTimes) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    auto* g = model.mutable_graph();
    *g->add_input() = makeValueInfo("x", kFloat, {"4", "8"});
    *g->add_initializer() = makeFloatInitializer("w", {8, 8});
    onnx::TensorProto trips;
    trips.set_name("trips");
    trips.set_data_type(onnx::TensorProto::INT64);
    trips.add_int64_data(5);
    *g->add_initializer() = trips;
    auto* loop = g->add_node();
    loop->set_op_type("Loop");
    loop->set_name("loop");
    loop->add_input("trips");
    loop->add_input("");
    loop->add_input("x");
    loop->add_output("y");
    auto* body = loop->add_attribute();
    body->set_name("body");
    body->set_type(onnx::AttributeProto::GRAPH);
    auto* b = body->mutable_g();
    b->set_name("body");
    *b->add_input() = makeValueInfo("i", onnx::TensorProto::INT64, {});
    *b->add_input() = makeValueInfo("cond", onnx::TensorProto::BOOL, {});
    *b->add_input() = makeValueInfo("h", kFloat, {"4", "8"});
    auto* mm = b->add_node();
    mm->set_op_type("MatMul");
    mm->add_input("h");
    mm->add_input("w");
    mm->add_output("h_next");
    auto* id = b->add_node();
    id->set_op_type("Identity");
    id->add_input("cond");
    id->add_output("cond_out");
    *b->add_output() = makeValueInfo("cond_out", onnx::TensorProto::BOOL, {});
    *b->add_output() = makeValueInfo("h_next", kFloat, {"4", "8"});
    g->add_output()->set_name("y");
    auto cost = computeModelCost(model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_DOUBLE_EQ(cost->total.macs, 5.0 * 4 * 8 * 8);
    EXPECT_FALSE(cost->nodes[0].estimate);
}

TEST(CostModel, ScopeOfNodeName) {
    EXPECT_EQ(scopeOfNodeName("/encoder/layer.3/attention/MatMul"), "/encoder/layer.3/attention");
    EXPECT_EQ(scopeOfNodeName("/MatMul"), "");
    EXPECT_EQ(scopeOfNodeName("MatMul_3"), "");
}

}  // namespace
}  // namespace onnxlens
