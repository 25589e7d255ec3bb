// Cast/CastLike (19, 21, 23, 24) and QuantizeLinear/DequantizeLinear (19, 21, 23) with the float8,
// int4/uint4, float4e2m1 and float8e8m0 types.
//
// Expected codes are worked out independently of the engine: a brute-force model of each format
// in Python (every finite code decoded from the spec's layout; a value goes to the nearest one,
// ties to the even code, overflow per the Cast spec's saturate tables), e.g. e4m3fn max 448 =
// 0x7E, e5m2 max 57344 = 0x7B, e4m3fnuz max 240 = 0x7F, NaN 0x80 for the fnuz types. The same
// model checked LowPrecisionFloat.h on 112490 (value, type, saturate) cases with no mismatch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor codes(DataType type, Shape shape, const std::vector<std::uint8_t>& bytes) {
    Tensor t(type, std::move(shape));
    EXPECT_EQ(static_cast<std::size_t>(t.numel()), bytes.size());
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
    return t;
}

std::vector<std::uint8_t> codesOf(const Tensor& t) {
    const auto* p = static_cast<const std::uint8_t*>(t.raw());
    return {p, p + t.byteSize()};
}

std::vector<float> floatsOf(const Tensor& t) {
    const Tensor f = t.castTo(DataType::Float);
    return {f.data<float>(), f.data<float>() + f.numel()};
}

void expectFloats(const Tensor& t, const std::vector<float>& expected) {
    const auto got = floatsOf(t);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i]))
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
        else
            EXPECT_EQ(got[i], expected[i]) << "element " << i;
    }
}

OneNodeSpec castTo(DataType to, Tensor x, int opset = 19, int saturate = -1,
                   const std::string& roundMode = {}) {
    OneNodeSpec spec{"Cast", "", opset, {Value(std::move(x))}, 1, {}};
    spec.attributes = [=](onnx::NodeProto& n) {
        setAttr(n, "to", static_cast<std::int64_t>(to));
        if (saturate >= 0) setAttr(n, "saturate", static_cast<std::int64_t>(saturate));
        if (!roundMode.empty()) setAttr(n, "round_mode", roundMode);
    };
    return spec;
}

OneNodeSpec node(const std::string& op, std::vector<Value> inputs, int opset,
                 std::function<void(onnx::NodeProto&)> attrs = {}) {
    OneNodeSpec spec{op, "", opset, std::move(inputs), 1, {}};
    spec.attributes = std::move(attrs);
    return spec;
}

// 0, -0, 1, 0.3, -2.5, 448, 449, 464, 470, 1000, -1000, 240, 250, 57344, 61440, 1e6, inf, -inf,
// NaN, 2^-9, 2^-10, 3 * 2^-10, 2^-17.
Tensor castInputs() {
    return makeTensor<float>({23}, {0.0f,
                                    -0.0f,
                                    1.0f,
                                    0.3f,
                                    -2.5f,
                                    448.0f,
                                    449.0f,
                                    464.0f,
                                    470.0f,
                                    1000.0f,
                                    -1000.0f,
                                    240.0f,
                                    250.0f,
                                    57344.0f,
                                    61440.0f,
                                    1e6f,
                                    kInf,
                                    -kInf,
                                    kNaN,
                                    std::ldexp(1.0f, -9),
                                    std::ldexp(1.0f, -10),
                                    3.0f * std::ldexp(1.0f, -10),
                                    std::ldexp(1.0f, -17)});
}

}  // namespace

TEST(LowPrecisionCast, FloatToFloat8SaturatesByDefault) {
    const struct {
        DataType type;
        std::vector<std::uint8_t> saturated, unsaturated;
    } cases[] = {
        {DataType::Float8E4M3FN,
         {0x00, 0x80, 0x38, 0x2A, 0xC2, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x77,
          0x78, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0x01, 0x00, 0x02, 0x00},
         {0x00, 0x80, 0x38, 0x2A, 0xC2, 0x7E, 0x7E, 0x7E, 0x7F, 0x7F, 0xFF, 0x77,
          0x78, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0x7F, 0x01, 0x00, 0x02, 0x00}},
        {DataType::Float8E4M3FNUZ,
         {0x00, 0x00, 0x40, 0x32, 0xCA, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0x7F,
          0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0x80, 0x02, 0x01, 0x03, 0x00},
         {0x00, 0x00, 0x40, 0x32, 0xCA, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F,
          0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x01, 0x03, 0x00}},
        {DataType::Float8E5M2,
         {0x00, 0x80, 0x3C, 0x35, 0xC1, 0x5F, 0x5F, 0x5F, 0x5F, 0x64, 0xE4, 0x5C,
          0x5C, 0x7B, 0x7B, 0x7B, 0x7B, 0xFB, 0x7F, 0x18, 0x14, 0x1A, 0x00},
         {0x00, 0x80, 0x3C, 0x35, 0xC1, 0x5F, 0x5F, 0x5F, 0x5F, 0x64, 0xE4, 0x5C,
          0x5C, 0x7B, 0x7C, 0x7C, 0x7C, 0xFC, 0x7F, 0x18, 0x14, 0x1A, 0x00}},
        {DataType::Float8E5M2FNUZ,
         {0x00, 0x00, 0x40, 0x39, 0xC5, 0x63, 0x63, 0x63, 0x63, 0x68, 0xE8, 0x60,
          0x60, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0x80, 0x1C, 0x18, 0x1E, 0x01},
         {0x00, 0x00, 0x40, 0x39, 0xC5, 0x63, 0x63, 0x63, 0x63, 0x68, 0xE8, 0x60,
          0x60, 0x7F, 0x80, 0x80, 0x80, 0x80, 0x80, 0x1C, 0x18, 0x1E, 0x01}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(engine::dataTypeName(c.type));
        Tensor byDefault = runOneNodeTensor(castTo(c.type, castInputs()));
        EXPECT_EQ(byDefault.dtype(), c.type);
        EXPECT_EQ(codesOf(byDefault), c.saturated);
        EXPECT_EQ(codesOf(runOneNodeTensor(castTo(c.type, castInputs(), 19, 1))), c.saturated);
        EXPECT_EQ(codesOf(runOneNodeTensor(castTo(c.type, castInputs(), 19, 0))), c.unsaturated);
    }
}

TEST(LowPrecisionCast, Float8ToFloatAndInt) {
    expectFloats(
        runOneNodeTensor(castTo(DataType::Float, codes(DataType::Float8E4M3FN, {6},
                                                       {0x7E, 0xFE, 0x7F, 0x01, 0x38, 0xC2}))),
        {448.0f, -448.0f, kNaN, std::ldexp(1.0f, -9), 1.0f, -2.5f});
    expectFloats(
        runOneNodeTensor(castTo(DataType::Float, codes(DataType::Float8E5M2, {6},
                                                       {0x3C, 0xC1, 0x7B, 0x7C, 0x01, 0x5F}))),
        {1.0f, -2.5f, 57344.0f, kInf, std::ldexp(1.0f, -16), 448.0f});
    expectFloats(runOneNodeTensor(castTo(DataType::Float, codes(DataType::Float8E4M3FNUZ, {5},
                                                                {0x80, 0x7F, 0xFF, 0x40, 0x01}))),
                 {kNaN, 240.0f, -240.0f, 1.0f, std::ldexp(1.0f, -10)});
    expectFloats(runOneNodeTensor(castTo(DataType::Float,
                                         codes(DataType::Float8E5M2FNUZ, {3}, {0x80, 0x7F, 0x01}))),
                 {kNaN, 57344.0f, std::ldexp(1.0f, -17)});
    // To integers as float to int: truncation toward zero.
    Tensor toInt = runOneNodeTensor(
        castTo(DataType::Int32, codes(DataType::Float8E4M3FN, {3}, {0xC2, 0x38, 0x7E})));
    EXPECT_TRUE(tensorsClose(toInt, makeTensor<std::int32_t>({3}, {-2, 1, 448})));
    // float16 and between float8 types.
    expectFloats(
        runOneNodeTensor(castTo(DataType::Float16, codes(DataType::Float8E5M2, {2}, {0x3C, 0xC1}))),
        {1.0f, -2.5f});
    // e5m2 57344 does not fit e4m3fn: saturated to 448, or NaN with saturate 0.
    Tensor big = codes(DataType::Float8E5M2, {2}, {0x7B, 0x3C});
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float8E4M3FN, big))),
              (std::vector<std::uint8_t>{0x7E, 0x38}));
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float8E4M3FN, big, 19, 0))),
              (std::vector<std::uint8_t>{0x7F, 0x38}));
}

TEST(LowPrecisionCast, FourBitIntegersRoundToEvenAndWrap) {
    // Rounded to even, then the low four bits (integer narrowing): -9.5 -> -10 -> 6,
    // 7.5 -> 8 -> -8, 100 -> 4; NaN -> 0.
    Tensor x = makeTensor<float>(
        {11}, {-9.5f, -8.5f, -7.5f, -0.5f, 0.5f, 1.5f, 2.5f, 7.49f, 7.5f, 100.0f, kNaN});
    Tensor i4 = runOneNodeTensor(castTo(DataType::Int4, x, 21));
    EXPECT_EQ(i4.dtype(), DataType::Int4);
    expectFloats(runOneNodeTensor(castTo(DataType::Float, i4, 21)),
                 {6, -8, -8, 0, 0, 2, 2, 7, -8, 4, 0});
    // -3 -> 13, 15.5 -> 16 -> 0, 1e9 = 62500000 * 16 -> 0.
    Tensor u = makeTensor<float>({6}, {-3.0f, 0.5f, 14.5f, 15.5f, 16.0f, 1e9f});
    Tensor u4 = runOneNodeTensor(castTo(DataType::UInt4, u, 21));
    EXPECT_EQ(codesOf(u4), (std::vector<std::uint8_t>{13, 0, 14, 0, 0, 0}));
    // From integers: -100 = -7 * 16 + 12 -> 12 -> -4 as int4, 100 -> 4.
    Tensor ints = makeTensor<std::int32_t>({4}, {-100, -8, 7, 100});
    expectFloats(runOneNodeTensor(castTo(DataType::Float,
                                         runOneNodeTensor(castTo(DataType::Int4, ints, 21)), 21)),
                 {-4, -8, 7, 4});
    // int4 to int64 and to string.
    Tensor back = runOneNodeTensor(castTo(DataType::Int64, codes(DataType::Int4, {2}, {0xF8, 7})));
    EXPECT_TRUE(tensorsClose(back, makeTensor<std::int64_t>({2}, {-8, 7})));
    Tensor text =
        runOneNodeTensor(castTo(DataType::String, codes(DataType::Float8E4M3FN, {1}, {0xC2})));
    EXPECT_EQ(text.data<std::string>()[0], "-2.5");
}

TEST(LowPrecisionCast, Float4E2M1EveryCodeAndRounding) {
    std::vector<std::uint8_t> all(16);
    for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
    expectFloats(
        runOneNodeTensor(castTo(DataType::Float, codes(DataType::Float4E2M1, {16}, all), 23)),
        {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6});
    // The ONNX reference: ties to even (1.25 -> 1, 2.5 -> 2, 5 -> 4), beyond 6 and inf -> 6,
    // NaN -> 0x7 (6), whatever saturate says.
    Tensor x = makeTensor<float>({8}, {0.3f, -2.5f, 1.25f, 5.0f, 7.0f, -kInf, kNaN, 0.25f});
    const std::vector<std::uint8_t> expected{0x1, 0xC, 0x2, 0x6, 0x7, 0xF, 0x7, 0x0};
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float4E2M1, x, 23))), expected);
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float4E2M1, x, 23, 0))), expected);
}

TEST(LowPrecisionCast, Float8E8M0PowersOfTwo) {
    expectFloats(runOneNodeTensor(castTo(DataType::Float,
                                         codes(DataType::Float8E8M0, {4}, {127, 128, 0, 255}), 24)),
                 {1.0f, 2.0f, std::ldexp(1.0f, -127), kNaN});
    Tensor x = makeTensor<float>({5}, {1.0f, 1.2f, 1.5f, 3.0f, 0.75f});
    // Default "up": the next power of two at or above.
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float8E8M0, x, 24))),
              (std::vector<std::uint8_t>{127, 128, 128, 129, 127}));
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float8E8M0, x, 25, -1, "down"))),
              (std::vector<std::uint8_t>{127, 127, 127, 128, 126}));
    EXPECT_EQ(codesOf(runOneNodeTensor(castTo(DataType::Float8E8M0, x, 25, -1, "nearest"))),
              (std::vector<std::uint8_t>{127, 127, 128, 129, 127}));
    auto bad = runOneNode(castTo(DataType::Float8E8M0, x, 25, -1, "sideways"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("round_mode"), std::string::npos) << bad.error().message;
}

TEST(LowPrecisionCast, CastLikeTakesSaturate) {
    Tensor target = codes(DataType::Float8E4M3FN, {1}, {0});
    Tensor x = makeTensor<float>({3}, {1000.0f, -kInf, 1.0f});
    auto run = [&](int saturate) {
        return codesOf(runOneNodeTensor(node("CastLike", {x, target}, 19, [=](onnx::NodeProto& n) {
            if (saturate >= 0) setAttr(n, "saturate", static_cast<std::int64_t>(saturate));
        })));
    };
    EXPECT_EQ(run(-1), (std::vector<std::uint8_t>{0x7E, 0xFE, 0x38}));
    EXPECT_EQ(run(0), (std::vector<std::uint8_t>{0x7F, 0xFF, 0x38}));
}

TEST(LowPrecisionQuantize, Float8PerTensorWithSaturate) {
    // x / 2 = 0, 1, 50, 500, -500, 0.15: e4m3fn 50 is a tie between 48 and 52 -> 48 (even),
    // 0.15 -> 0.15625 (0x22).
    Tensor x = makeTensor<float>({6}, {0, 2, 100, 1000, -1000, 0.3f});
    Tensor zero = codes(DataType::Float8E4M3FN, {}, {0});
    auto q = [&](int saturate) {
        return runOneNodeTensor(node(
            "QuantizeLinear", {x, Tensor::scalar<float>(2), zero}, 19, [=](onnx::NodeProto& n) {
                if (saturate >= 0) setAttr(n, "saturate", static_cast<std::int64_t>(saturate));
            }));
    };
    Tensor saturated = q(-1);
    EXPECT_EQ(saturated.dtype(), DataType::Float8E4M3FN);
    EXPECT_EQ(codesOf(saturated), (std::vector<std::uint8_t>{0x00, 0x38, 0x64, 0x7E, 0xFE, 0x22}));
    EXPECT_EQ(codesOf(q(0)), (std::vector<std::uint8_t>{0x00, 0x38, 0x64, 0x7F, 0xFF, 0x22}));
    Tensor e5m2 = runOneNodeTensor(node(
        "QuantizeLinear", {x, Tensor::scalar<float>(2), codes(DataType::Float8E5M2, {}, {0})}, 19));
    EXPECT_EQ(codesOf(e5m2), (std::vector<std::uint8_t>{0x00, 0x3C, 0x52, 0x60, 0xE0, 0x31}));
    // And back: 48 * 2 = 96 for the tie, 448 * 2 for the saturated values.
    Tensor d =
        runOneNodeTensor(node("DequantizeLinear", {saturated, Tensor::scalar<float>(2), zero}, 19));
    expectFloats(d, {0, 2, 96, 896, -896, 0.3125f});
}

TEST(LowPrecisionQuantize, Float8PerAxisDequantize) {
    // e5m2 [2, 3], axis 0: row scales 1 and 0.5.
    Tensor x = codes(DataType::Float8E5M2, {2, 3}, {0x3C, 0xC1, 0x7B, 0x7C, 0x01, 0x5F});
    Tensor scale = makeTensor<float>({2}, {1.0f, 0.5f});
    Tensor y =
        runOneNodeTensor(node("DequantizeLinear", {Value(x), Value(scale)}, 19,
                              [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{0}); }));
    expectFloats(y, {1.0f, -2.5f, 57344.0f, kInf, std::ldexp(1.0f, -17), 224.0f});
}

TEST(LowPrecisionQuantize, Int4PerAxisAndBlockwise) {
    // Per axis 0: row 0 scale 1 zp 0, row 1 scale 0.5 zp -2; rint(x / s) + zp clamped to
    // [-8, 7]: [-10, -3.4, 4.6] -> [-8, -3, 5]; [1, 2.5, 30] / 0.5 = [2, 5, 60] - 2 -> [0, 3, 7].
    Tensor x = makeTensor<float>({2, 3}, {-10, -3.4f, 4.6f, 1, 2.5f, 30});
    Tensor scale = makeTensor<float>({2}, {1.0f, 0.5f});
    Tensor zp = codes(DataType::Int4, {2}, {0, 0xFE});
    auto axis0 = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{0}); };
    Tensor q = runOneNodeTensor(node("QuantizeLinear", {x, scale, zp}, 21, axis0));
    EXPECT_EQ(q.dtype(), DataType::Int4);
    EXPECT_EQ(codesOf(q), (std::vector<std::uint8_t>{0xF8, 0xFD, 5, 0, 3, 7}));
    Tensor d = runOneNodeTensor(node("DequantizeLinear", {q, scale, zp}, 21, axis0));
    expectFloats(d, {-8, -3, 5, 1, 2.5f, 4.5f});

    // Block-wise along axis 1, blocks of 2: scales [0.5, 2], int4 via output_dtype.
    Tensor xb = makeTensor<float>({1, 4}, {1, 2, 3, 4});
    Tensor sb = makeTensor<float>({1, 2}, {0.5f, 2.0f});
    Tensor qb = runOneNodeTensor(node("QuantizeLinear", {xb, sb}, 21, [](onnx::NodeProto& n) {
        setAttr(n, "axis", std::int64_t{1});
        setAttr(n, "block_size", std::int64_t{2});
        setAttr(n, "output_dtype", static_cast<std::int64_t>(DataType::Int4));
    }));
    EXPECT_EQ(qb.dtype(), DataType::Int4);
    EXPECT_EQ(codesOf(qb), (std::vector<std::uint8_t>{2, 4, 2, 2}));  // 1.5 and 2 round to 2

    // uint4 block-wise dequantize with zero points [8, 1]:
    // [(15 - 8) * 0.5, (0 - 8) * 0.5, (3 - 1) * 2, (8 - 1) * 2].
    Tensor u = codes(DataType::UInt4, {1, 4}, {15, 0, 3, 8});
    Tensor uz = codes(DataType::UInt4, {1, 2}, {8, 1});
    Tensor du = runOneNodeTensor(node("DequantizeLinear", {u, sb, uz}, 21, [](onnx::NodeProto& n) {
        setAttr(n, "axis", std::int64_t{1});
        setAttr(n, "block_size", std::int64_t{2});
    }));
    expectFloats(du, {3.5f, -4, 4, 14});
}

TEST(LowPrecisionQuantize, Float4E2M1AtOpset23AndTypeErrors) {
    Tensor x = makeTensor<float>({4}, {0.3f, -2.5f, 7, 1.25f});
    Tensor zero = codes(DataType::Float4E2M1, {}, {0});
    Tensor q = runOneNodeTensor(node("QuantizeLinear", {x, Tensor::scalar<float>(1), zero}, 23));
    EXPECT_EQ(codesOf(q), (std::vector<std::uint8_t>{0x1, 0xC, 0x7, 0x2}));
    expectFloats(
        runOneNodeTensor(node("DequantizeLinear", {q, Tensor::scalar<float>(2), zero}, 23)),
        {1, -4, 12, 2});
    // float4e2m1 before opset 23 and int4 before 21 are refused with the reason.
    auto early = runOneNode(node("QuantizeLinear", {x, Tensor::scalar<float>(1), zero}, 21));
    ASSERT_FALSE(early.ok());
    EXPECT_NE(early.error().message.find("float4e2m1 is not supported at opset 21"),
              std::string::npos)
        << early.error().message;
    auto int4At19 = runOneNode(
        node("DequantizeLinear", {codes(DataType::Int4, {1}, {1}), Tensor::scalar<float>(1)}, 19));
    ASSERT_FALSE(int4At19.ok());
    // A zero point of another type than the input.
    auto mixed = runOneNode(node("DequantizeLinear",
                                 {codes(DataType::Int4, {1}, {1}), Tensor::scalar<float>(1),
                                  codes(DataType::UInt4, {}, {1})},
                                 21));
    ASSERT_FALSE(mixed.ok());
    EXPECT_NE(mixed.error().message.find("zero point type uint4"), std::string::npos)
        << mixed.error().message;
}

}  // namespace onnxlens::testing
