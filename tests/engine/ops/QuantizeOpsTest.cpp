// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear with hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

OneNodeSpec node(const std::string& op, std::vector<Value> inputs, int opset = 13,
                 std::function<void(onnx::NodeProto&)> attrs = {}, int outputs = 1) {
    OneNodeSpec spec{op, "", opset, std::move(inputs), outputs, {}};
    spec.attributes = std::move(attrs);
    return spec;
}

TEST(QuantizeOps, QuantizeRoundsHalfToEvenAndSaturates) {
    // x / 2 = 0.5, 1.5, 2.5, -0.5, 300, -300; rounded to even 0, 2, 2, -0, then + 10 and clamped.
    Tensor x = makeTensor<float>({6}, {1, 3, 5, -1, 600, -600});
    auto u8 = runOneNodeTensor(
        node("QuantizeLinear", {x, Tensor::scalar<float>(2), Tensor::scalar<std::uint8_t>(10)}));
    EXPECT_TRUE(tensorsClose(u8, makeTensor<std::uint8_t>({6}, {10, 12, 12, 10, 255, 0})));
    auto i8 = runOneNodeTensor(
        node("QuantizeLinear", {x, Tensor::scalar<float>(2), Tensor::scalar<std::int8_t>(-10)}));
    EXPECT_TRUE(tensorsClose(i8, makeTensor<std::int8_t>({6}, {-10, -8, -8, -10, 127, -128})));
    // No zero point: uint8 with zero point 0.
    auto noZero = runOneNodeTensor(node("QuantizeLinear", {x, Tensor::scalar<float>(2)}));
    EXPECT_TRUE(tensorsClose(noZero, makeTensor<std::uint8_t>({6}, {0, 2, 2, 0, 255, 0})));
}

// A long run (the vector kernel takes 16 at a time, the scalar loop the rest): ties, saturation,
// infinities and NaN (0), against the spec's steps computed here for each value.
TEST(QuantizeOps, LongRunsEqualTheSpecValueByValue) {
    std::vector<float> values;
    for (int i = 0; i < 70; ++i) values.push_back(static_cast<float>(i - 35) * 0.75f);
    for (float v : {1e30f, -1e30f, INFINITY, -INFINITY, std::nanf(""), 254.5f, 255.5f, -0.5f,
                    -128.5f, 127.5f, 2.5f, 3.5f, -2.5f})
        values.push_back(v);
    const auto count = static_cast<std::int64_t>(values.size());
    for (const int zero : {0, 3, 200, -7}) {
        const bool isSigned = zero < 0 || zero == 3;
        const float scale = 0.5f;
        const Tensor zp = isSigned ? Tensor::scalar<std::int8_t>(static_cast<std::int8_t>(zero))
                                   : Tensor::scalar<std::uint8_t>(static_cast<std::uint8_t>(zero));
        const Tensor y = runOneNodeTensor(node(
            "QuantizeLinear", {makeTensor<float>({count}, values), Tensor::scalar(scale), zp}));
        const double lo = isSigned ? -128 : 0, hi = isSigned ? 127 : 255;
        for (std::int64_t i = 0; i < count; ++i) {
            const float v = values[static_cast<std::size_t>(i)];
            const double q =
                std::isnan(v)
                    ? 0.0
                    : std::clamp(std::nearbyint(static_cast<double>(v / scale)) + zero, lo, hi);
            const int actual = isSigned ? y.data<std::int8_t>()[i] : y.data<std::uint8_t>()[i];
            ASSERT_EQ(actual, static_cast<int>(q)) << v << " zero point " << zero;
        }
    }
}

TEST(QuantizeOps, PerAxisScalesAndZeroPoints) {
    // x [2,2,2], axis 1: channel 0 uses scale 1 / zp 0, channel 1 scale 0.5 / zp 100.
    Tensor x = makeTensor<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    Tensor scale = makeTensor<float>({2}, {1, 0.5f});
    Tensor zp = makeTensor<std::uint8_t>({2}, {0, 100});
    auto q = runOneNodeTensor(node("QuantizeLinear", {x, scale, zp}));
    EXPECT_TRUE(
        tensorsClose(q, makeTensor<std::uint8_t>({2, 2, 2}, {1, 2, 106, 108, 5, 6, 114, 116})));
    auto d = runOneNodeTensor(node("DequantizeLinear", {q, scale, zp}));
    EXPECT_TRUE(tensorsClose(d, x));
    // Negative axis -3 picks dim 0 (also size 2).
    auto axis0 = node("DequantizeLinear", {q, scale, zp}, 13,
                      [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{-3}); });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(axis0),
                             makeTensor<float>({2, 2, 2}, {1, 2, 106, 108, -47.5f, -47, 7, 8})));
}

TEST(QuantizeOps, BadScalesAreErrors) {
    Tensor x = makeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto wrongCount = runOneNode(node("QuantizeLinear", {x, makeTensor<float>({2}, {1, 1})}));
    ASSERT_FALSE(wrongCount);
    EXPECT_NE(wrongCount.error().message.find("axis 1 of the input has size 3"), std::string::npos)
        << wrongCount.error().message;
    auto perAxisAtOpset10 =
        runOneNode(node("QuantizeLinear", {x, makeTensor<float>({3}, {1, 1, 1})}, 10));
    ASSERT_FALSE(perAxisAtOpset10);
    auto zeroScale = runOneNode(node("QuantizeLinear", {x, Tensor::scalar<float>(0)}));
    ASSERT_FALSE(zeroScale);
    EXPECT_NE(zeroScale.error().message.find("non-zero"), std::string::npos);
}

TEST(QuantizeOps, DequantizeInt32WithoutZeroPoint) {
    auto y =
        runOneNodeTensor(node("DequantizeLinear", {makeTensor<std::int32_t>({3}, {-4, 0, 1000}),
                                                   Tensor::scalar<float>(0.25f)}));
    EXPECT_TRUE(tensorsClose(y, makeTensor<float>({3}, {-1, 0, 250})));
}

// A long input (the vector range pass, 32 values at a time, then the scalar tail), the extremes
// at the start, in the middle of a vector and in the tail, a NaN among them (ignored by the range):
// the range, scale and zero point the reference's steps give.
TEST(QuantizeOps, DynamicQuantizeRangeOfALongInputIgnoresNaN) {
    for (const std::size_t lowAt : {std::size_t{0}, std::size_t{45}, std::size_t{98}}) {
        std::vector<float> values(100);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<float>(i % 13) * 0.25f - 1.0f;
        values[lowAt] = -7.5f;
        values[(lowAt + 31) % 100] = 3.25f;
        values[(lowAt + 7) % 100] = std::nanf("");
        auto result = runOneNode(
            node("DynamicQuantizeLinear", {makeTensor<float>({100}, values)}, 11, {}, 3));
        ASSERT_TRUE(result) << result.error().message;
        const float scale = (3.25f - -7.5f) / 255.0f;
        EXPECT_EQ(result->at(1).tensor().data<float>()[0], scale) << lowAt;
        EXPECT_EQ(result->at(2).tensor().data<std::uint8_t>()[0],
                  static_cast<std::uint8_t>(std::nearbyint(7.5f / scale)))
            << lowAt;
    }
}

TEST(QuantizeOps, DynamicQuantizeCoversZero) {
    // Range [min(x,0), max(x,0)] = [-1, 4]: scale 5/255, zero point round(1 / (5/255)) = 51.
    Tensor x = makeTensor<float>({4}, {-1, 0, 2, 4});
    auto result = runOneNode(node("DynamicQuantizeLinear", {x}, 11, {}, 3));
    ASSERT_TRUE(result) << result.error().message;
    const float scale = 5.0f / 255.0f;
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), Tensor::scalar<float>(scale)));
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), Tensor::scalar<std::uint8_t>(51)));
    // q = round(x / scale) + 51: -51 + 51 = 0, 51, 102 + 51 = 153, 204 + 51 = 255.
    EXPECT_TRUE(
        tensorsClose(result->at(0).tensor(), makeTensor<std::uint8_t>({4}, {0, 51, 153, 255})));
    // All zeros: scale 0 and everything at zero point 0.
    auto zeros =
        runOneNode(node("DynamicQuantizeLinear", {makeTensor<float>({2}, {0, 0})}, 11, {}, 3));
    ASSERT_TRUE(zeros);
    EXPECT_TRUE(tensorsClose(zeros->at(0).tensor(), makeTensor<std::uint8_t>({2}, {0, 0})));
}

}  // namespace
}  // namespace onnxlens::testing
