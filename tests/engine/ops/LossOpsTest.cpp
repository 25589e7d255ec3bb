// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with each reduction, class
// weights, ignore_index, extra spatial dims, the log_prob output and bad targets.
#include <cmath>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

OneNodeSpec lossSpec(const std::string& op, Tensor input, Tensor target,
                     std::optional<Tensor> weight, const std::string& reduction,
                     std::optional<std::int64_t> ignoreIndex = std::nullopt) {
    OneNodeSpec spec = nodeSpec(op, 13, {Value(input), Value(target)});
    if (weight) spec.inputs.push_back(Value(*weight));
    spec.attributes = [=](onnx::NodeProto& node) {
        setAttr(node, "reduction", reduction);
        if (ignoreIndex) setAttr(node, "ignore_index", *ignoreIndex);
    };
    return spec;
}

// Log-probabilities of 3 samples over 3 classes, targets 0, 2, 1.
const Tensor kLogProb = makeTensor<float>({3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
const Tensor kTargets = makeTensor<std::int64_t>({3}, {0, 2, 1});

TEST(LossOps, NllEachReduction) {
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb, kTargets, {}, "none")),
        floats({3}, {1, 6, 8})));
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb, kTargets, {}, "sum")),
        floats({}, {15})));
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb, kTargets, {}, "mean")),
        floats({}, {5})));
}

TEST(LossOps, NllWeightsAndIgnoredTargets) {
    Tensor weight = floats({3}, {1, 2, 3});
    // Losses 1*1, 3*6, 2*8 = 1, 18, 16; the weighted mean divides by 1 + 3 + 2.
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb, kTargets, weight, "mean")),
        floats({}, {35.0f / 6})));
    // Ignoring class 2 drops the second sample from both sums.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb,
                                                       kTargets, weight, "mean", 2)),
                             floats({}, {17.0f / 3})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", kLogProb,
                                                       kTargets, weight, "none", 2)),
                             floats({3}, {1, 0, 16})));
}

TEST(LossOps, NllWithSpatialDims) {
    // [N=1, C=2, d=2]: position 0 picks class 1 (-0.5), position 1 class 0 (-3).
    Tensor input = floats({1, 2, 2}, {-0.25f, -3, -0.5f, -4});
    Tensor target = makeTensor<std::int32_t>({1, 2}, {1, 0});
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("NegativeLogLikelihoodLoss", input, target, {}, "none")),
        floats({1, 2}, {0.5f, 3})));
}

TEST(LossOps, NllRejectsOutOfRangeTargetsAndBadShapes) {
    Tensor badTarget = makeTensor<std::int64_t>({3}, {0, 3, 1});
    auto result = runOneNode(lossSpec("NegativeLogLikelihoodLoss", kLogProb, badTarget, {}, "sum"));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("outside [0, 3)"), std::string::npos)
        << result.error().message;
    Tensor shortTarget = makeTensor<std::int64_t>({2}, {0, 1});
    EXPECT_FALSE(
        runOneNode(lossSpec("NegativeLogLikelihoodLoss", kLogProb, shortTarget, {}, "sum")));
}

TEST(LossOps, SoftmaxCrossEntropyWithLogProbOutput) {
    // Scores {0, ln 3} give probabilities {1/4, 3/4}.
    float ln3 = std::log(3.0f);
    Tensor scores = floats({2, 2}, {0, ln3, ln3, 0});
    Tensor labels = makeTensor<std::int64_t>({2}, {1, 1});
    OneNodeSpec spec = lossSpec("SoftmaxCrossEntropyLoss", scores, labels, {}, "mean");
    spec.outputCount = 2;
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    float logQuarter = std::log(0.25f), logThreeQuarters = std::log(0.75f);
    EXPECT_TRUE(
        tensorsClose(result->at(0).tensor(), floats({}, {-(logThreeQuarters + logQuarter) / 2})));
    EXPECT_TRUE(
        tensorsClose(result->at(1).tensor(),
                     floats({2, 2}, {logQuarter, logThreeQuarters, logThreeQuarters, logQuarter})));
}

TEST(LossOps, SoftmaxCrossEntropyIsStableForLargeScores) {
    Tensor scores = floats({1, 2}, {1000, 1000});
    Tensor labels = makeTensor<std::int64_t>({1}, {0});
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(lossSpec("SoftmaxCrossEntropyLoss", scores, labels, {}, "sum")),
        floats({}, {std::log(2.0f)})));
}

TEST(LossOps, UnknownReductionIsAnError) {
    auto result = runOneNode(lossSpec("SoftmaxCrossEntropyLoss", kLogProb, kTargets, {}, "max"));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("reduction"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
