// The convtranspose-as-conv pass: ConvTranspose with kernel = stride as a 1x1 Conv and a
// DepthToSpace, a BatchNormalization folded into it, the activation moved in front of the
// DepthToSpace; what it leaves alone; and optimized against unoptimized runs.
#include <gtest/gtest.h>

#include <cmath>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

// Runs only the pass under test; returns its rewrites.
int runPass(onnx::ModelProto& model) {
    engine::OptimizerOptions options;
    options.passes = {"convtranspose-as-conv"};
    return engine::optimizeModel(model, {}, options).passes.at(0).rewrites;
}

Tensor ripple(Shape shape, float phase, float offset = 0.0f) {
    std::vector<float> v(static_cast<std::size_t>(engine::shapeElementCount(shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = offset + 0.5f * std::sin(0.71f * static_cast<float>(i) + phase);
    return Tensor::fromVector<float>(std::move(shape), v);
}

// x [2, 6, 5, 4] -> ConvTranspose (k = s = `size`, 6 -> m channels) [-> BatchNormalization]
// [-> `activation`]; its output (or the activation's) is the graph output.
onnx::ModelProto upsampler(std::int64_t size, std::int64_t m, bool batchNorm,
                           const std::string& activation) {
    auto model = emptyModel();
    auto& g = *model.mutable_graph();
    addFloatInput(g, "x", {2, 6, 5, 4});
    addInitializer(g, "w", ripple({6, m, size, size}, 0.3f));
    addInitializer(g, "b", ripple({m}, 1.1f));
    auto* ct = addNode(g, "ConvTranspose", {"x", "w", "b"}, {"up"});
    setAttr(*ct, "strides", std::vector<std::int64_t>{size, size});
    setAttr(*ct, "kernel_shape", std::vector<std::int64_t>{size, size});
    std::string value = "up";
    if (batchNorm) {
        addInitializer(g, "gamma", ripple({m}, 0.2f, 1.0f));
        addInitializer(g, "beta", ripple({m}, 0.9f));
        addInitializer(g, "mean", ripple({m}, 1.7f));
        addInitializer(g, "var", ripple({m}, 2.3f, 1.0f));
        addNode(g, "BatchNormalization", {value, "gamma", "beta", "mean", "var"}, {"normed"});
        value = "normed";
    }
    if (!activation.empty()) {
        addNode(g, activation, {value}, {"activated"});
        value = "activated";
    }
    g.add_output()->set_name(value);
    return model;
}

onnx::ModelProto optimizeAndCompare(const onnx::ModelProto& model) {
    LoadedModel loaded;
    loaded.path = "convtranspose-as-conv.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions plainOptions;
    plainOptions.optimize = false;
    auto plain = engine::Session::create(loaded, plainOptions);
    auto optimized = engine::Session::create(loaded, {});
    if (!plain || !optimized) {
        ADD_FAILURE() << (plain ? optimized.error().message : plain.error().message);
        return {};
    }
    auto feeds = engine::prepareFeeds((*plain)->inputs(), {}, {}, 5);
    EXPECT_TRUE(feeds);
    if (!feeds) return {};
    auto expected = (*plain)->run(*feeds);
    auto actual = (*optimized)->run(*feeds);
    EXPECT_TRUE(expected && actual);
    if (expected && actual) {
        EXPECT_EQ(expected->size(), actual->size());
        for (std::size_t i = 0; i < std::min(expected->size(), actual->size()); ++i)
            EXPECT_TRUE(tensorsClose((*actual)[i].tensor(), (*expected)[i].tensor(), {1e-4, 1e-5}));
    }
    return (*optimized)->optimizedModel();
}

}  // namespace

TEST(ConvTransposeAsConv, KernelEqualStrideBecomesConvAndDepthToSpaceWithBatchNormAndActivation) {
    auto model = upsampler(2, 3, true, "Relu");
    EXPECT_EQ(runPass(model), 1);
    auto counts = opCounts(model);
    EXPECT_EQ(counts["ConvTranspose"], 0);
    EXPECT_EQ(counts["BatchNormalization"], 0);
    ASSERT_EQ(model.graph().node_size(), 3);
    EXPECT_EQ(model.graph().node(0).op_type(), "Conv");
    EXPECT_EQ(model.graph().node(1).op_type(), "Relu");  // in front of the DepthToSpace
    EXPECT_EQ(model.graph().node(2).op_type(), "DepthToSpace");
    EXPECT_EQ(model.graph().node(2).output(0), "activated");
    optimizeAndCompare(upsampler(2, 3, true, "Relu"));
}

TEST(ConvTransposeAsConv, OtherShapesAndActivationsComputeTheSame) {
    for (std::int64_t size : {1, 2, 3})
        for (std::int64_t m : {1, 8, 24})
            for (const char* activation : {"", "Sigmoid", "LeakyRelu"})
                for (bool batchNorm : {false, true}) {
                    SCOPED_TRACE(std::to_string(size) + " " + std::to_string(m) + " " + activation +
                                 (batchNorm ? " bn" : ""));
                    const auto optimized =
                        optimizeAndCompare(upsampler(size, m, batchNorm, activation));
                    EXPECT_EQ(opCounts(optimized)["ConvTranspose"], 0);
                }
}

TEST(ConvTransposeAsConv, OverlappingOrPaddedOrGroupedKernelsStay) {
    auto overlapping = upsampler(2, 4, false, "");
    auto* strides = overlapping.mutable_graph()->mutable_node(0)->mutable_attribute(0);
    strides->set_ints(0, 1);  // stride 1 with a 2x2 kernel: tiles overlap
    strides->set_ints(1, 1);
    auto padded = upsampler(2, 4, false, "");
    setAttr(*padded.mutable_graph()->mutable_node(0), "pads",
            std::vector<std::int64_t>{1, 0, 1, 0});
    auto grouped = upsampler(2, 4, false, "");  // 6 input channels, group 2: W is [6, 2, 2, 2]
    auto& gg = *grouped.mutable_graph();
    *gg.mutable_initializer(0) = engine::tensorToProto(ripple({6, 2, 2, 2}, 0.3f), "w");
    setAttr(*gg.mutable_node(0), "group", std::int64_t{2});
    for (auto* model : {&overlapping, &padded, &grouped}) {
        onnx::ModelProto copy = *model;
        EXPECT_EQ(runPass(copy), 0);
        EXPECT_EQ(opCounts(optimizeAndCompare(*model))["ConvTranspose"], 1);
    }
}
