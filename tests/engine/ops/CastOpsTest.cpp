// Cast and CastLike between numeric, bool, reduced-precision float and string types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

OneNodeSpec cast(Tensor x, DataType to, int opset = 17) {
    OneNodeSpec spec{"Cast", "", opset, {std::move(x)}, 1, {}};
    spec.attributes = [to](onnx::NodeProto& n) { setAttr(n, "to", static_cast<std::int64_t>(to)); };
    return spec;
}

TEST(CastOps, FloatToStringLikeNumpy) {
    // numpy str(): shortest round-trip digits; positional in [1e-4, 1e16), scientific outside.
    Tensor x = makeTensor<float>({7}, {0.5f, 100.0f, 1e-5f, 123456789.0f, -2.5f, std::nanf(""),
                                       -std::numeric_limits<float>::infinity()});
    auto y = runOneNodeTensor(cast(x, DataType::String));
    EXPECT_TRUE(
        tensorsClose(y, makeTensor<std::string>(
                            {7}, {"0.5", "100.0", "1e-05", "123456790.0", "-2.5", "nan", "-inf"})));
    // float16 0.1 prints with the digits float16 needs, not float's.
    auto h = runOneNodeTensor(
        cast(makeTensor<engine::float16>({1}, {engine::float16(0.1f)}), DataType::String));
    EXPECT_TRUE(tensorsClose(h, makeTensor<std::string>({1}, {"0.1"})));
    auto ints = runOneNodeTensor(
        cast(makeTensor<std::int64_t>({2}, {-7, 1234567890123}), DataType::String));
    EXPECT_TRUE(tensorsClose(ints, makeTensor<std::string>({2}, {"-7", "1234567890123"})));
}

TEST(CastOps, StringToNumbers) {
    Tensor s = makeTensor<std::string>({5}, {"1.5", "-INF", "+INF", "NaN", "2e3"});
    auto f = runOneNodeTensor(cast(s, DataType::Float));
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(tensorsClose(f, makeTensor<float>({5}, {1.5f, -inf, inf, std::nanf(""), 2000.0f})));
    auto i = runOneNodeTensor(
        cast(makeTensor<std::string>({3}, {"42", "-9000000000", "+7"}), DataType::Int64));
    EXPECT_TRUE(tensorsClose(i, makeTensor<std::int64_t>({3}, {42, -9000000000, 7})));
    auto bad = runOneNode(cast(makeTensor<std::string>({1}, {"pear"}), DataType::Float));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("'pear'"), std::string::npos) << bad.error().message;
}

TEST(CastOps, BFloat16KeepsTheUpperHalfOfFloatBits) {
    // bfloat16 steps by 2^-7 near 1. 1 + 2^-7 + 2^-8 + 2^-9 is 0.75 of a step above 1 + 2^-7:
    // rounding would give 1 + 2^-6, the ONNX 1.12 reference data truncates to 1 + 2^-7.
    const float value = 1.0f + std::ldexp(1.0f, -7) + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -9);
    auto y = runOneNodeTensor(cast(makeTensor<float>({1}, {value}), DataType::BFloat16));
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    const auto expectedBits = static_cast<std::uint16_t>(bits >> 16);
    EXPECT_EQ(Eigen::numext::bit_cast<std::uint16_t>(y.data<engine::bfloat16>()[0]), expectedBits);
    auto back = runOneNodeTensor(cast(y, DataType::Float));
    EXPECT_EQ(back.data<float>()[0], 1.0f + std::ldexp(1.0f, -7));
}

TEST(CastOps, FloatToIntegerTruncatesAndSaturates) {
    Tensor x = makeTensor<float>({4}, {2.9f, -2.9f, 1e10f, std::nanf("")});
    auto y = runOneNodeTensor(cast(x, DataType::Int32));
    EXPECT_TRUE(tensorsClose(
        y, makeTensor<std::int32_t>({4}, {2, -2, std::numeric_limits<std::int32_t>::max(), 0})));
    auto b = runOneNodeTensor(cast(makeTensor<float>({3}, {0.0f, -0.5f, 3.0f}), DataType::Bool));
    EXPECT_TRUE(tensorsClose(b, makeTensor<bool>({3}, {false, true, true})));
    auto h = runOneNodeTensor(cast(makeTensor<double>({2}, {0.1, 65504.0}), DataType::Float16));
    EXPECT_TRUE(tensorsClose(
        h, makeTensor<engine::float16>({2}, {engine::float16(0.1f), engine::float16(65504.0f)})));
}

TEST(CastOps, Opset1NamesTheTargetType) {
    OneNodeSpec spec{"Cast", "", 1, {makeTensor<std::int32_t>({2}, {1, 2})}, 1, {}};
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "to", std::string("DOUBLE")); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<double>({2}, {1.0, 2.0})));
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "to", std::string("QUATERNION")); };
    auto bad = runOneNode(spec);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("QUATERNION"), std::string::npos);
}

TEST(CastOps, CastLikeTakesTheSecondInputsType) {
    OneNodeSpec spec{"CastLike", "",
                     15,         {makeTensor<float>({2, 0}, {}), Tensor::scalar<std::uint8_t>(0)},
                     1,          {}};
    auto y = runOneNodeTensor(spec);
    EXPECT_EQ(y.dtype(), DataType::UInt8);
    EXPECT_EQ(y.shape(), (Shape{2, 0}));
    spec.inputs = {makeTensor<std::int64_t>({2}, {3, -1}), Tensor::scalar<float>(0)};
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({2}, {3, -1})));
}

}  // namespace
}  // namespace onnxlens::testing
