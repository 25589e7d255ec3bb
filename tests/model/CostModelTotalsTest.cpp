// The cost model's totals: weights counted wherever they live (Constant nodes, subgraphs), totals
// flagged as lower bounds when a node's shapes are unknown, and shapes behind the
// shape-computing subgraph known once the user's dims are bound. Counts worked by hand.
#include <gtest/gtest.h>

#include <filesystem>

#include "SyntheticModels.h"
#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"

namespace onnxlens {
namespace {

using testing::addIntAttribute;
using testing::addNode;
using testing::makeFloatInitializer;
using testing::makeInt64Initializer;
using testing::makeModelShell;
using testing::makeValueInfo;

constexpr int kFloat = onnx::TensorProto::FLOAT;

// A Constant node holding `tensor`, output `name`.
void addConstant(onnx::GraphProto& g, const std::string& name, const onnx::TensorProto& tensor) {
    auto* node = addNode(g, "Constant", "", {}, {name});
    auto* a = node->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = tensor;
    a->mutable_t()->clear_name();
}

TEST(CostModelTotals, WeightsInConstantNodesAreParameters) {
    // x [2, 4] x W [4, 3] where W is a Constant node: 12 parameters (48 bytes), MACs 2 x 3 x 4.
    auto model = makeModelShell(13);
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", kFloat, {"2", "4"});
    addConstant(g, "w", makeFloatInitializer("w", {4, 3}));
    addNode(g, "MatMul", "/fc/MatMul", {"x", "w"}, {"y"});
    g.add_output()->set_name("y");
    auto cost = computeModelCost(*model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_EQ(cost->total.parameters, 12u);
    EXPECT_EQ(cost->total.parameterBytes, 48u);
    EXPECT_EQ(cost->parametersByType.at("float32").parameters, 12u);
    EXPECT_DOUBLE_EQ(cost->total.macs, 24);
    EXPECT_FALSE(cost->totalIsLowerBound());

    // The model summary counts them too, beside the (absent) initializers.
    LoadedModel loaded;
    loaded.proto = model;
    auto summary = summarizeModel(loaded);
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->initializers.parameters, 0);
    EXPECT_EQ(summary->initializers.constantCount, 1);
    EXPECT_EQ(summary->initializers.constantParameters, 12);
    EXPECT_EQ(summary->initializers.constantBytes, 48);
}

TEST(CostModelTotals, WeightsReadInsideSubgraphsCountOnce) {
    // If(cond): both branches multiply x [1, 4] by the outer W [4, 2] (8 parameters, read twice:
    // counted once) and the then branch adds its own initializer b [2] (2 more parameters).
    auto model = makeModelShell(13);
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", kFloat, {"1", "4"});
    *g.add_input() = makeValueInfo("cond", onnx::TensorProto::BOOL, {});
    *g.add_initializer() = makeFloatInitializer("w", {4, 2});
    auto* node = addNode(g, "If", "/if", {"cond"}, {"y"});
    for (const char* name : {"then_branch", "else_branch"}) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto& b = *a->mutable_g();
        b.set_name(name);
        const std::string product = std::string(name) + "_product";
        addNode(b, "MatMul", "", {"x", "w"}, {product});
        if (std::string(name) == "then_branch") {
            *b.add_initializer() = makeFloatInitializer("bias", {2});
            addNode(b, "Add", "", {product, "bias"}, {"then_out"});
            *b.add_output() = makeValueInfo("then_out", kFloat, {"1", "2"});
        } else {
            *b.add_output() = makeValueInfo(product, kFloat, {"1", "2"});
        }
    }
    g.add_output()->set_name("y");
    auto cost = computeModelCost(*model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_EQ(cost->total.parameters, 10u);
    EXPECT_EQ(cost->total.parameterBytes, 40u);
}

TEST(CostModelTotals, UnknownShapesMakeTheTotalALowerBound) {
    // A custom op's output has no shape: the MatMul after it cannot be counted, the Conv-free
    // MatMul before it can. The total is "at least" and says how many nodes are unknown.
    auto model = makeModelShell(13);
    auto* custom = model->add_opset_import();
    custom->set_domain("example.custom");
    custom->set_version(1);
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", kFloat, {"2", "4"});
    *g.add_initializer() = makeFloatInitializer("w1", {4, 4});
    *g.add_initializer() = makeFloatInitializer("w2", {4, 4});
    addNode(g, "MatMul", "/a", {"x", "w1"}, {"h"});
    addNode(g, "Mystery", "/m", {"h"}, {"hidden"})->set_domain("example.custom");
    addNode(g, "MatMul", "/b", {"hidden", "w2"}, {"y"});
    g.add_output()->set_name("y");
    auto cost = computeModelCost(*model);
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_EQ(cost->nodesWithUnknownShapes, 1);
    EXPECT_TRUE(cost->totalIsLowerBound());
    EXPECT_DOUBLE_EQ(cost->total.macs, 2.0 * 4 * 4);  // the first MatMul only
    EXPECT_FALSE(cost->nodes[2].shapesKnown);
    bool said = false;
    for (const auto& a : cost->assumptions) said = said || a.find("at least") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(CostModelTotals, RangeBehindTheShapeIsCountedWithTheBoundDims) {
    // positions = Range(0, Gather(Shape(ids), 1)); Gather the table by them, MatMul by W [8, 8]:
    // with sequence = 128, MACs 128 x 8 x 8 (the shape after Range is known).
    auto model = makeModelShell(14);
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("ids", onnx::TensorProto::INT64, {"batch", "sequence"});
    *g.add_initializer() = makeFloatInitializer("table", {512, 8});
    *g.add_initializer() = makeFloatInitializer("w", {8, 8});
    auto scalar = [&](const std::string& name, std::int64_t v) {
        onnx::TensorProto t;
        t.set_name(name);
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_int64_data(v);
        *g.add_initializer() = t;
    };
    scalar("zero", 0);
    scalar("one", 1);
    addNode(g, "Shape", "", {"ids"}, {"s"});
    addNode(g, "Gather", "", {"s", "one"}, {"t"});
    addNode(g, "Range", "", {"zero", "t", "one"}, {"positions"});
    addNode(g, "Gather", "", {"table", "positions"}, {"embedded"});
    addNode(g, "MatMul", "/mm", {"embedded", "w"}, {"y"});
    g.add_output()->set_name("y");
    auto cost = computeModelCost(*model, {{"batch", 1}, {"sequence", 128}});
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_EQ(cost->nodesWithUnknownShapes, 0);
    EXPECT_DOUBLE_EQ(cost->total.macs, 128.0 * 8 * 8);
}

TEST(CostModelTotals, TorchExportedTinyBertHasNoUnknownNode) {
    // tiny_bert: hidden 64, 2 layers, 4 heads, FF 256 (resources/samples/make_samples.py). At
    // batch 2, sequence 16 (32 tokens) the products are, per layer: Q, K, V and the output
    // projection 4 x 32 x 64 x 64, FF 2 x 32 x 64 x 256, scores and context 2 x 2 x 4 x 16 x 16 x
    // 16; plus the pooler 2 x 64 x 64.
    const auto path =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources/samples/tiny_bert/model.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no sample at " << path;
    auto model = loadModel(path);
    ASSERT_TRUE(model.ok()) << model.error().message;
    auto cost = computeModelCost(*model->proto, {{"batch", 2}, {"sequence", 16}});
    ASSERT_TRUE(cost) << cost.error().message;
    EXPECT_EQ(cost->nodesWithUnknownShapes, 0);
    EXPECT_FALSE(cost->totalIsLowerBound());
    const double perLayer = 4.0 * 32 * 64 * 64 + 2.0 * 32 * 64 * 256 + 2.0 * 2 * 4 * 16 * 16 * 16;
    const double expected = 2 * perLayer + 2.0 * 64 * 64;
    EXPECT_NEAR(cost->total.macs, expected, expected * 1e-9);
}

}  // namespace
}  // namespace onnxlens
