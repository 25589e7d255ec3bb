// The optimizer as a table of named passes run by one driver: order, selection by name, the pass
// each node came from, and shape inference shared with the summary of the opened model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/ViewGraph.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

// x -> Identity -> Conv -> BatchNormalization -> Add(x) -> Relu -> y: every cleanup pass and
// the conv fusions have something to do.
onnx::ModelProto residualBlock() {
    auto m = emptyModel(13);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 6, 6});
    addNode(g, "Identity", {"x"}, {"xi"});
    std::vector<float> w(4 * 4 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * static_cast<float>(i % 13) - 0.1f;
    addInitializer(g, "w", makeTensor<float>({4, 4, 3, 3}, w));
    auto* conv = addNode(g, "Conv", {"xi", "w"}, {"c"});
    setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    addInitializer(g, "scale", makeTensor<float>({4}, {1.0f, 0.5f, 2.0f, 1.5f}));
    addInitializer(g, "bias", makeTensor<float>({4}, {0.1f, -0.1f, 0.2f, 0.0f}));
    addInitializer(g, "mean", makeTensor<float>({4}, {0.0f, 0.1f, -0.1f, 0.2f}));
    addInitializer(g, "var", makeTensor<float>({4}, {1.0f, 0.9f, 1.1f, 0.5f}));
    addNode(g, "BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
    addNode(g, "Add", {"bn", "x"}, {"s"});
    addNode(g, "Relu", {"s"}, {"y"});
    auto* y = g.add_output();
    y->set_name("y");
    auto* t = y->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (auto d : {1, 4, 6, 6}) t->mutable_shape()->add_dim()->set_dim_value(d);
    return m;
}

std::vector<std::string> passNames(const engine::OptimizationReport& report) {
    std::vector<std::string> names;
    for (const auto& p : report.passes) names.push_back(p.pass);
    return names;
}

}  // namespace

TEST(OptimizerPipeline, PassTableListsThePassesInTheOrderTheyRun) {
    std::vector<std::string> names, cleanup;
    for (const auto& pass : engine::optimizerPasses()) {
        names.push_back(pass.name);
        if (pass.cleanup) cleanup.push_back(pass.name);
    }
    const std::vector<std::string> expectedCleanup = {
        "compute-float16-in-float",        "eliminate-identity",
        "eliminate-inference-dropout",     "fold-constants",
        "reshape-targets-from-input-dims", "fold-batchnorm-into-conv"};
    EXPECT_EQ(cleanup, expectedCleanup);
    ASSERT_GE(names.size(), 11u);
    // Cleanup first, then the fusions; the conv fusions before the blocked layout that rewrites
    // them, GELU before MatMul + bias + Gelu.
    auto at = [&](const std::string& name) {
        return std::find(names.begin(), names.end(), name) - names.begin();
    };
    for (const auto& name : expectedCleanup) EXPECT_LT(at(name), at("fuse-conv-add"));
    EXPECT_LT(at("fuse-conv-add"), at("fuse-conv-activation"));
    EXPECT_LT(at("fuse-conv-activation"), at("channel-blocked-layout"));
    EXPECT_LT(at("fuse-gelu"), at("fuse-matmul-gelu"));
    EXPECT_LT(at("fuse-matmul-bias"), at("fuse-matmul-gelu"));

    auto model = residualBlock();
    const auto report = engine::optimizeModel(model, {});
    EXPECT_EQ(passNames(report), names);  // the report lists every pass that ran, in table order
}

TEST(OptimizerPipeline, UnknownPassNamesAreRefusedNamingThem) {
    EXPECT_TRUE(engine::checkOptimizerPassNames({"fold-constants", "fuse-gelu"}));
    auto unknown = engine::checkOptimizerPassNames({"fold-constants", "fuse-everything"});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("fuse-everything"), std::string::npos);
    EXPECT_NE(unknown.error().message.find("fold-constants"), std::string::npos);  // the known ones
}

TEST(OptimizerPipeline, OnlyTheChosenPassesRun) {
    auto m = residualBlock();
    engine::OptimizerOptions options;
    options.passes = {"eliminate-identity", "fuse-conv-activation"};
    const auto report = engine::optimizeModel(m, {}, options);
    EXPECT_EQ(passNames(report),
              (std::vector<std::string>{"eliminate-identity", "fuse-conv-activation"}));
    EXPECT_EQ(report.passes[0].rewrites, 1);
    EXPECT_EQ(report.passes[1].rewrites, 0);  // Relu reads the Add, not a Conv
    std::vector<std::string> ops;
    for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
    EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "BatchNormalization", "Add", "Relu"}));
    EXPECT_EQ(report.nodesBefore, 5);
    EXPECT_EQ(report.nodesAfter, 4);
}

TEST(OptimizerPipeline, EveryRewrittenNodeNamesItsPass) {
    auto m = residualBlock();
    engine::OptimizerOptions options;
    options.passes = {"fold-batchnorm-into-conv", "fuse-conv-add", "fuse-conv-activation"};
    const auto report = engine::optimizeModel(m, {}, options);
    ASSERT_EQ(m.graph().node_size(), 2);
    EXPECT_EQ(m.graph().node(0).op_type(), "Identity");
    EXPECT_EQ(engine::optimizerPassOf(m.graph().node(0)), "");  // as the model had it
    const auto& fused = m.graph().node(1);
    EXPECT_EQ(fused.op_type(), "FusedConv");
    // The Conv took the BatchNormalization's output, became a FusedConv with the Add, then took
    // the Relu: the last pass that wrote it is named.
    EXPECT_EQ(engine::optimizerPassOf(fused), "fuse-conv-activation");
    for (const auto& p : report.passes) EXPECT_EQ(p.rewrites, 1) << p.pass;

    // Run alone, the BatchNormalization fold names itself on the Conv it rewrote.
    auto alone = residualBlock();
    options.passes = {"fold-batchnorm-into-conv"};
    engine::optimizeModel(alone, {}, options);
    EXPECT_EQ(alone.graph().node(1).op_type(), "Conv");
    EXPECT_EQ(engine::optimizerPassOf(alone.graph().node(1)), "fold-batchnorm-into-conv");
}

TEST(OptimizerPipeline, OptimizedAndPlainSessionsComputeTheSame) {
    LoadedModel loaded;
    loaded.path = "residual.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(residualBlock());
    engine::SessionOptions plain;
    plain.optimize = false;
    auto a = engine::Session::create(loaded, plain);
    auto b = engine::Session::create(loaded);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_LT((*b)->optimizedModel().graph().node_size(), 5);  // 5 nodes unoptimized
    std::vector<float> x(4 * 36);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.05f * static_cast<float>(i % 17) - 0.4f;
    std::map<std::string, engine::Value> feeds{{"x", makeTensor<float>({1, 4, 6, 6}, x)}};
    auto ra = (*a)->run(feeds);
    auto rb = (*b)->run(feeds);
    ASSERT_TRUE(ra && rb);
    EXPECT_TRUE(tensorsClose((*rb)[0].tensor(), (*ra)[0].tensor(), {1e-4, 1e-5}));
}

// One opened model (ModelDocument.cpp, then the engine session the docks share): the summary, the
// view graph, and the optimizer's passes that read shapes (the residual Add fusion here) share
// one shape inference; the BatchNormalization fold and the identity removal keep shapes.
TEST(OptimizerPipeline, AnOpenedModelInfersShapesOnce) {
    std::string bytes;
    ASSERT_TRUE(residualBlock().SerializeToString(&bytes));
    auto loaded = loadModelFromBytes(bytes, "residual.onnx", {});
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto before = shapeInferenceRunCount();
    auto summary = summarizeModel(*loaded);
    ASSERT_TRUE(summary);
    ViewGraphOptions viewOptions;
    viewOptions.shapes = loaded->shapes->get(*loaded->proto);
    ASSERT_TRUE(buildViewGraph(loaded->proto, viewOptions));
    auto session = engine::Session::create(*loaded);
    ASSERT_TRUE(session) << session.error().message;
    int fusedAdds = 0;
    for (const auto& p : (*session)->optimizationReport().passes)
        if (p.pass == "fuse-conv-add") fusedAdds = p.rewrites;
    EXPECT_EQ(fusedAdds, 1);  // it did read shapes
    EXPECT_EQ(shapeInferenceRunCount() - before, 1u);

    // The same for a sample model loaded from its file.
    auto mnist = loadModel(std::filesystem::path(ONNXLENS_SOURCE_DIR) /
                           "resources/samples/mnist_cnn/model.onnx");
    ASSERT_TRUE(mnist);
    const auto beforeMnist = shapeInferenceRunCount();
    ASSERT_TRUE(summarizeModel(*mnist));
    ASSERT_TRUE(engine::Session::create(*mnist));
    EXPECT_EQ(shapeInferenceRunCount() - beforeMnist, 1u);
}
