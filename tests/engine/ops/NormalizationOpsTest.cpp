// Normalizations: BatchNormalization (inference, training outputs, old opsets), instance and
// layer normalization (statistics outputs, broadcast scale), LRN, MVN; zero-size batches and
// malformed parameters.
#include <cmath>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

TEST(NormalizationOps, BatchNormalizationInference) {
    // Two channels of two values each, N = 1.
    Tensor x = floats({1, 2, 2}, {1, 3, 10, 20});
    OneNodeSpec spec =
        nodeSpec("BatchNormalization", 15,
                 {Value(x), Value(floats({2}, {2, 1})), Value(floats({2}, {0.5f, -1})),
                  Value(floats({2}, {2, 15})), Value(floats({2}, {4, 25}))});
    spec.attributes = [](onnx::NodeProto& node) { setAttr(node, "epsilon", 0.0f); };
    // Channel 0: 2 * (x - 2) / 2 + 0.5; channel 1: (x - 15) / 5 - 1.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floats({1, 2, 2}, {-0.5f, 1.5f, -2, 0})));
}

TEST(NormalizationOps, BatchNormalizationTrainingModeOutputsRunningStatistics) {
    // One channel, values {1, 3} over N = 2: batch mean 2, population variance 1.
    Tensor x = floats({2, 1}, {1, 3});
    OneNodeSpec spec = nodeSpec("BatchNormalization", 15,
                                {Value(x), Value(floats({1}, {1})), Value(floats({1}, {0})),
                                 Value(floats({1}, {10})), Value(floats({1}, {5}))},
                                3);
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "training_mode", std::int64_t{1});
        setAttr(node, "epsilon", 0.0f);
        setAttr(node, "momentum", 0.5f);
    };
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({2, 1}, {-1, 1})));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), floats({1}, {6})));  // 10 * .5 + 2 * .5
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), floats({1}, {3})));  // 5 * .5 + 1 * .5
}

TEST(NormalizationOps, BatchNormalizationZeroBatchAndBadParameters) {
    auto params = [](std::int64_t n) { return Value(floats({n}, std::vector<float>(n, 1.0f))); };
    OneNodeSpec empty =
        nodeSpec("BatchNormalization", 15,
                 {Value(floats({0, 3, 2}, {})), params(3), params(3), params(3), params(3)});
    EXPECT_EQ(runOneNodeTensor(empty).shape(), (Shape{0, 3, 2}));

    OneNodeSpec bad =
        nodeSpec("BatchNormalization", 15,
                 {Value(floats({1, 3}, {1, 2, 3})), params(2), params(3), params(3), params(3)});
    auto result = runOneNode(bad);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("channels 3"), std::string::npos)
        << result.error().message;
}

TEST(NormalizationOps, InstanceNormalization) {
    // One instance {1, 2, 3, 4}: mean 2.5, variance 1.25.
    Tensor x = floats({1, 1, 4}, {1, 2, 3, 4});
    OneNodeSpec spec = nodeSpec("InstanceNormalization", 6,
                                {Value(x), Value(floats({1}, {2})), Value(floats({1}, {1}))});
    spec.attributes = [](onnx::NodeProto& node) { setAttr(node, "epsilon", 0.0f); };
    float s = 1.0f / std::sqrt(1.25f);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec),
                             floats({1, 1, 4}, {1 - 3 * s, 1 - s, 1 + s, 1 + 3 * s})));
}

TEST(NormalizationOps, LayerNormalizationWithStatisticsOutputs) {
    // Rows {1, 3} and {2, 6}; normalized over the last axis (negative axis).
    Tensor x = floats({2, 2}, {1, 3, 2, 6});
    OneNodeSpec spec =
        nodeSpec("LayerNormalization", 17,
                 {Value(x), Value(floats({2}, {1, 2})), Value(floats({2}, {0, 1}))}, 3);
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "axis", std::int64_t{-1});
        setAttr(node, "epsilon", 0.0f);
    };
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({2, 2}, {-1, 3, -1, 3})));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), floats({2, 1}, {2, 4})));
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), floats({2, 1}, {1, 0.5f})));
}

TEST(NormalizationOps, LayerNormalizationScaleBroadcastsOverNormalizedAxes) {
    // axis 0 normalizes all four values {0, 2, 4, 6}: mean 3, variance 5; scale [2] broadcasts.
    Tensor x = floats({2, 2}, {0, 2, 4, 6});
    OneNodeSpec spec = nodeSpec("LayerNormalization", 17, {Value(x), Value(floats({2}, {1, -1}))});
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "axis", std::int64_t{0});
        setAttr(node, "epsilon", 0.0f);
    };
    float s = 1.0f / std::sqrt(5.0f);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floats({2, 2}, {-3 * s, s, s, -3 * s})));
}

TEST(NormalizationOps, LayerNormalizationBadAxisAndScale) {
    Tensor x = floats({2, 2}, {0, 2, 4, 6});
    OneNodeSpec spec =
        nodeSpec("LayerNormalization", 17, {Value(x), Value(floats({3}, {1, 1, 1}))});
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("does not broadcast"), std::string::npos);
    spec.inputs[1] = Value(floats({2}, {1, 1}));
    spec.attributes = [](onnx::NodeProto& node) { setAttr(node, "axis", std::int64_t{2}); };
    EXPECT_FALSE(runOneNode(spec));
}

TEST(NormalizationOps, LocalResponseNormalizationAcrossChannels) {
    // Three channels of one pixel {1, 2, 3}, size 3: windows {0,1}, {0,1,2}, {1,2}.
    Tensor x = floats({1, 3, 1, 1}, {1, 2, 3});
    OneNodeSpec spec = nodeSpec("LRN", 13, {Value(x)});
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "size", std::int64_t{3});
        setAttr(node, "alpha", 3.0f);
        setAttr(node, "beta", 1.0f);
        setAttr(node, "bias", 1.0f);
    };
    // y = x / (1 + 3 / 3 * sum of squares)
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec),
                             floats({1, 3, 1, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14})));
}

TEST(NormalizationOps, MeanVarianceNormalizationOverChosenAxes) {
    Tensor x = floats({2, 2}, {1, 3, 5, 5});
    OneNodeSpec spec = nodeSpec("MeanVarianceNormalization", 13, {Value(x)});
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "axes", std::vector<std::int64_t>{1});
    };
    // Row {1, 3}: mean 2, std 1. Row {5, 5}: std 0, so (x - mean) / 1e-9 = 0.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floats({2, 2}, {-1, 1, 0, 0})));
}

}  // namespace
}  // namespace onnxlens::testing
