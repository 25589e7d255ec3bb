// NonMaxSuppression and RoiAlign on hand-checked boxes and images.
#include <gtest/gtest.h>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

// Three boxes: A (0,0)-(2,2); B shifted by 0.5 (IoU with A = 2.25 / 5.75 = 0.39); C far away.
Tensor threeBoxes() {
    return makeTensor<float>({1, 3, 4}, {0, 0, 2, 2, 0.5f, 0.5f, 2.5f, 2.5f, 10, 10, 11, 11});
}

OneNodeSpec nms(Tensor boxes, Tensor scores, std::int64_t maxPerClass, float iou,
                std::optional<float> scoreThreshold = std::nullopt) {
    OneNodeSpec spec{"NonMaxSuppression",
                     "",
                     17,
                     {std::move(boxes), std::move(scores),
                      makeTensor<std::int64_t>({1}, {maxPerClass}), makeTensor<float>({1}, {iou})}};
    if (scoreThreshold) spec.inputs.push_back(makeTensor<float>({1}, {*scoreThreshold}));
    return spec;
}

TEST(ObjectDetectionOps, NmsSuppressesByIouThreshold) {
    Tensor scores = makeTensor<float>({1, 1, 3}, {0.9f, 0.8f, 0.7f});
    // IoU 0.39 > 0.3: B is suppressed.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(nms(threeBoxes(), scores, 10, 0.3f)),
                             makeTensor<std::int64_t>({2, 3}, {0, 0, 0, 0, 0, 2})));
    // IoU 0.39 <= 0.5: all kept, in score order.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(nms(threeBoxes(), scores, 10, 0.5f)),
                             makeTensor<std::int64_t>({3, 3}, {0, 0, 0, 0, 0, 1, 0, 0, 2})));
}

TEST(ObjectDetectionOps, NmsScoreThresholdLimitAndClasses) {
    Tensor scores = makeTensor<float>({1, 2, 3}, {0.2f, 0.9f, 0.6f, 0.5f, 0.1f, 0.95f});
    // Class 0 keeps B (0.9) then C (0.6); A (0.2) is below 0.3. Class 1 keeps C then A.
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(nms(threeBoxes(), scores, 2, 0.5f, 0.3f)),
                     makeTensor<std::int64_t>({4, 3}, {0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 0})));
    // At most one box per class.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(nms(threeBoxes(), scores, 1, 0.5f, 0.3f)),
                             makeTensor<std::int64_t>({2, 3}, {0, 0, 1, 0, 1, 2})));
    // Zero boxes per class selects nothing.
    EXPECT_EQ(runOneNodeTensor(nms(threeBoxes(), scores, 0, 0.5f)).shape(), (Shape{0, 3}));
}

TEST(ObjectDetectionOps, NmsCenterPointBoxesAndFlippedCorners) {
    // Same boxes as A and B in centre format, and A with swapped corners.
    Tensor centre = makeTensor<float>({1, 2, 4}, {1, 1, 2, 2, 1.5f, 1.5f, 2, 2});
    auto spec = nms(centre, makeTensor<float>({1, 1, 2}, {0.9f, 0.8f}), 10, 0.3f);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "center_point_box", std::int64_t{1}); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<std::int64_t>({1, 3}, {0, 0, 0})));
    Tensor flipped = makeTensor<float>({1, 2, 4}, {2, 2, 0, 0, 0.5f, 0.5f, 2.5f, 2.5f});
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(nms(flipped, makeTensor<float>({1, 1, 2}, {0.8f, 0.9f}), 10, 0.3f)),
        makeTensor<std::int64_t>({1, 3}, {0, 0, 1})));
}

TEST(ObjectDetectionOps, NmsRejectsMismatchedShapes) {
    EXPECT_FALSE(
        runOneNode(nms(threeBoxes(), makeTensor<float>({1, 1, 2}, {0.1f, 0.2f}), 1, 0.5f)));
}

// RoiAlign on a ramp image (value = x + 10 y): bilinear interpolation is exact on it, so every
// bin's average is the ramp at the bin's centre.
TEST(ObjectDetectionOps, RoiAlignAveragesBilinearSamples) {
    std::vector<float> ramp;
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 6; ++x) ramp.push_back(static_cast<float>(x + 10 * y));
    OneNodeSpec spec{"RoiAlign",
                     "",
                     16,
                     {makeTensor<float>({1, 1, 6, 6}, ramp),
                      makeTensor<float>({1, 4}, {1, 1, 5, 3}), makeTensor<std::int64_t>({1}, {0})}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "output_height", std::int64_t{1});
        setAttr(n, "output_width", std::int64_t{2});
        setAttr(n, "sampling_ratio", std::int64_t{2});
    };
    // half_pixel: roi x 0.5..4.5, y 0.5..2.5; bins centred at x 1.5 and 3.5, y 1.5.
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 1, 1, 2}, {16.5, 18.5})));
}

TEST(ObjectDetectionOps, RoiAlignMaxOfConstantImageAndBadBatchIndex) {
    std::vector<float> ones(16, 2.0f);
    OneNodeSpec spec{"RoiAlign",
                     "",
                     16,
                     {makeTensor<float>({1, 1, 4, 4}, ones),
                      makeTensor<float>({1, 4}, {0, 0, 3, 3}), makeTensor<std::int64_t>({1}, {0})}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "mode", std::string("avg"));
        setAttr(n, "output_height", std::int64_t{2});
        setAttr(n, "output_width", std::int64_t{2});
    };
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 1, 2, 2}, {2, 2, 2, 2})));
    spec.inputs[2] = makeTensor<std::int64_t>({1}, {3});
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("batch index"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing

namespace onnxlens::testing {
namespace {

TEST(ObjectDetectionOps, NonFiniteInputsAreHandled) {
    // A NaN score never gets selected.
    Tensor scores = makeTensor<float>({1, 1, 3}, {std::nanf(""), 0.8f, 0.7f});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(nms(threeBoxes(), scores, 10, 0.5f)),
                             makeTensor<std::int64_t>({2, 3}, {0, 0, 1, 0, 0, 2})));
    // A NaN or enormous roi is an error, not a crash or a runaway allocation.
    for (float bad : {std::nanf(""), 1e30f}) {
        OneNodeSpec spec{
            "RoiAlign",
            "",
            16,
            {Tensor::zeros(DataType::Float, {1, 1, 4, 4}),
             makeTensor<float>({1, 4}, {0, 0, bad, 3}), makeTensor<std::int64_t>({1}, {0})}};
        EXPECT_FALSE(runOneNode(spec)) << bad;
    }
}

}  // namespace
}  // namespace onnxlens::testing
