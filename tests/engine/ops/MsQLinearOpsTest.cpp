// ONNX Runtime's com.microsoft QOperator operators (QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearConcat, QLinearSoftmax, QLinearAveragePool,
// QLinearGlobalAveragePool) against double-precision references written here: dequantize,
// compute, quantize with round half to even and saturation. The kernels compute in float as ONNX
// Runtime does, so a value within 1e-3 of a rounding tie may land on either side: there (and only
// there) one step of difference is allowed, and such values are counted to stay rare.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../../../engine/ops/MsQLinearCommon.h"
#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

// The code of real value v for (scale, zero): round half to even, saturate; nearTie when v / scale
// is within float's reach of a .5 (1e-5 relative).
struct Expected {
    std::int64_t code = 0;
    bool nearTie = false;
};

template <class Q>
Expected quantizeRef(double v, double scale, std::int64_t zero) {
    const double u = v / scale;
    const double frac = u - std::floor(u);
    Expected e;
    const double r = std::nearbyint(u) + static_cast<double>(zero);
    // (Saturated values are exact whichever way they round.)
    e.nearTie = std::abs(frac - 0.5) <= 1e-5 * std::max(1.0, std::abs(u)) &&
                r >= std::numeric_limits<Q>::lowest() - 1.0 &&
                r <= std::numeric_limits<Q>::max() + 1.0;
    e.code = static_cast<std::int64_t>(
        std::clamp<double>(r, std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max()));
    return e;
}

template <class Q>
::testing::AssertionResult matches(const Tensor& actual, const std::vector<Expected>& expected,
                                   const Shape& shape) {
    if (actual.dtype() != engine::dataTypeOf<Q>)
        return ::testing::AssertionFailure()
               << "wrong type " << engine::dataTypeName(actual.dtype());
    if (actual.shape() != shape)
        return ::testing::AssertionFailure() << "shape " << engine::shapeToString(actual.shape())
                                             << ", expected " << engine::shapeToString(shape);
    if (static_cast<std::size_t>(actual.numel()) != expected.size())
        return ::testing::AssertionFailure() << "wrong reference size";
    const Q* a = actual.data<Q>();
    std::size_t ties = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::int64_t diff = std::abs(static_cast<std::int64_t>(a[i]) - expected[i].code);
        if (expected[i].nearTie) ++ties;
        if (diff > (expected[i].nearTie ? 1 : 0))
            return ::testing::AssertionFailure()
                   << "element " << i << ": " << static_cast<int>(a[i]) << ", expected "
                   << expected[i].code;
    }
    if (ties > std::max<std::size_t>(3, expected.size() / 50))
        return ::testing::AssertionFailure() << ties << " values near a rounding tie";
    return ::testing::AssertionSuccess();
}

template <class Q>
Tensor randomCodes(const Shape& shape, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(std::numeric_limits<Q>::lowest(),
                                            std::numeric_limits<Q>::max());
    Tensor t(engine::dataTypeOf<Q>, shape);
    Q* p = t.data<Q>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<Q>(dist(rng));
    return t;
}

template <class Q>
Tensor zeroPoint(int v) {
    return Tensor::scalar<Q>(static_cast<Q>(v));
}
Tensor scale(float v) { return Tensor::scalar<float>(v); }

// The flat index of output element `i` in an input of shape `in` broadcast to `out` (numpy).
std::int64_t broadcastIndex(std::int64_t i, const Shape& out, const Shape& in) {
    std::int64_t index = 0, stride = 1;
    for (std::size_t k = 0; k < out.size(); ++k) {
        const std::size_t d = out.size() - 1 - k;
        const std::int64_t coord = i % out[d];
        i /= out[d];
        if (k < in.size()) {
            const std::int64_t size = in[in.size() - 1 - k];
            if (size != 1) index += coord * stride;
            stride *= size;
        }
    }
    return index;
}

// ---------------------------------------------------------------------------------------------
// QLinearAdd, QLinearMul

struct BinaryCase {
    Shape a, b, out;
    float sa, sb, sc;
    int za, zb, zc;
};

template <class Q>
void checkBinary(const std::string& op, const BinaryCase& c, unsigned seed) {
    SCOPED_TRACE(op + " " + engine::shapeToString(c.a) + " x " + engine::shapeToString(c.b));
    const Tensor a = randomCodes<Q>(c.a, seed), b = randomCodes<Q>(c.b, seed + 1);
    const Tensor y =
        runOneNodeTensor(nodeSpec(op, 1,
                                  {a, scale(c.sa), zeroPoint<Q>(c.za), b, scale(c.sb),
                                   zeroPoint<Q>(c.zb), scale(c.sc), zeroPoint<Q>(c.zc)},
                                  1, kMs));
    std::vector<Expected> expected(static_cast<std::size_t>(engine::shapeElementCount(c.out)));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto ia = broadcastIndex(static_cast<std::int64_t>(i), c.out, c.a);
        const auto ib = broadcastIndex(static_cast<std::int64_t>(i), c.out, c.b);
        const double va = c.sa * (static_cast<double>(a.data<Q>()[ia]) - c.za);
        const double vb = c.sb * (static_cast<double>(b.data<Q>()[ib]) - c.zb);
        expected[i] = quantizeRef<Q>(op == "QLinearAdd" ? va + vb : va * vb, c.sc, c.zc);
    }
    EXPECT_TRUE(matches<Q>(y, expected, c.out));
}

// requantize works in float (so that its loops vectorise) and must give what rounding to int32
// and saturating gives, MLAS's x86 way: a value outside int32 or NaN takes the lowest code. Every
// 997th float bit pattern and the edges.
TEST(MsQLinearOps, RequantizeInFloatEqualsRoundingToInt32AndSaturating) {
    auto reference = []<class Q>(float v) {
        const std::int64_t r = engine::ops::qlinear::roundToInt32(v);
        return static_cast<Q>(std::clamp<std::int64_t>(r, std::numeric_limits<Q>::lowest(),
                                                       std::numeric_limits<Q>::max()));
    };
    std::vector<float> values{std::nanf(""), INFINITY, -INFINITY, 2147483648.0f, -2147483648.0f,
                              2147483520.0f, 0.5f,     1.5f,      254.5f,        255.5f,
                              -128.5f,       127.5f,   -0.5f,     300.0f};
    for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 997) {
        const auto b = static_cast<std::uint32_t>(bits);
        float f;
        std::memcpy(&f, &b, 4);
        values.push_back(f);
    }
    for (float v : values) {
        ASSERT_EQ(engine::ops::qlinear::requantize<std::uint8_t>(v),
                  reference.template operator()<std::uint8_t>(v))
            << v;
        ASSERT_EQ(engine::ops::qlinear::requantize<std::int8_t>(v),
                  reference.template operator()<std::int8_t>(v))
            << v;
    }
#ifdef __AVX2__
    // The vector kernels' sixteen at a time (cvtps2dq and saturating packs) give the same.
    values.resize((values.size() + 15) / 16 * 16, 0.0f);
    for (std::size_t i = 0; i < values.size(); i += 16) {
        std::uint8_t u[16];
        std::int8_t q[16];
        const __m256 first = _mm256_loadu_ps(&values[i]), second = _mm256_loadu_ps(&values[i + 8]);
        engine::ops::storeSixteenRequantized(first, second, u);
        engine::ops::storeSixteenRequantized(first, second, q);
        for (std::size_t k = 0; k < 16; ++k) {
            ASSERT_EQ(u[k], reference.template operator()<std::uint8_t>(values[i + k]))
                << values[i + k];
            ASSERT_EQ(q[k], reference.template operator()<std::int8_t>(values[i + k]))
                << values[i + k];
        }
    }
#endif
}

TEST(MsQLinearOps, AddAndMulMatchTheDoubleReferenceWithBroadcasting) {
    const std::vector<BinaryCase> cases = {
        {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}, 0.05f, 0.11f, 0.13f, 128, 100, 120},
        {{2, 3, 4}, {3, 1}, {2, 3, 4}, 0.0213f, 0.0719f, 0.0911f, 10, 200, 128},  // per-row operand
        {{1}, {2, 5}, {2, 5}, 0.3f, 0.01f, 0.04f, 0, 128, 3},                     // scalar A
        {{2, 1, 3}, {4, 1}, {2, 4, 3}, 0.06f, 0.05f, 0.1f, 77, 130, 90},          // both broadcast
        // Long rows (the vector kernels, 16 at a time, and their tails): both varying, and one
        // value per row against a varying row.
        {{3, 45}, {3, 45}, {3, 45}, 0.0313f, 0.0271f, 0.0497f, 131, 118, 125},
        {{3, 1}, {3, 45}, {3, 45}, 0.08f, 0.02f, 0.06f, 40, 128, 100},
    };
    unsigned seed = 1;
    for (const auto& c : cases) {
        checkBinary<std::uint8_t>("QLinearAdd", c, seed);
        checkBinary<std::uint8_t>("QLinearMul", c, seed + 10);
        BinaryCase s = c;  // the same in int8, zero points moved into its range
        s.za -= 128, s.zb -= 128, s.zc -= 128;
        checkBinary<std::int8_t>("QLinearAdd", s, seed + 20);
        checkBinary<std::int8_t>("QLinearMul", s, seed + 30);
        ++seed;
    }
}

TEST(MsQLinearOps, AddWorkedByHandRoundsHalfToEvenAndSaturates) {
    // A, B in steps of 0.5 around zero points 10 and 0, C in steps of 1 from zero point 100:
    // 0.5 + 0 = 0.5 -> 100 (half to even), 1.5 -> 102, 2.5 -> 102, -0.5 -> 100, then saturation.
    const Tensor a = makeTensor<std::uint8_t>({6}, {11, 13, 15, 9, 255, 0});
    const Tensor b = makeTensor<std::uint8_t>({6}, {0, 0, 0, 0, 255, 0});
    const Tensor y =
        runOneNodeTensor(nodeSpec("QLinearAdd", 1,
                                  {a, scale(0.5f), zeroPoint<std::uint8_t>(10), b, scale(0.5f),
                                   Value(), scale(1.0f), zeroPoint<std::uint8_t>(100)},
                                  1, kMs));
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::uint8_t>({6}, {100, 102, 102, 100, 255, 95})));
    // No zero points at all: int8 with zero 0; 100 * 2 = 200 saturates to 127.
    const Tensor m = runOneNodeTensor(
        nodeSpec("QLinearMul", 1,
                 {makeTensor<std::int8_t>({3}, {100, -3, 5}), scale(1.0f), Value(),
                  makeTensor<std::int8_t>({3}, {2, 3, -30}), scale(1.0f), Value(), scale(1.0f)},
                 1, kMs));
    EXPECT_TRUE(tensorsClose(m, makeTensor<std::int8_t>({3}, {127, -9, -128})));
}

// ---------------------------------------------------------------------------------------------
// QLinearSigmoid, QLinearLeakyRelu: every code once.

template <class Q, class F>
void checkLookup(const std::string& op, float alpha, F&& f) {
    SCOPED_TRACE(op);
    Tensor x(engine::dataTypeOf<Q>, {256});
    for (int i = 0; i < 256; ++i)
        x.data<Q>()[i] = static_cast<Q>(std::numeric_limits<Q>::lowest() + i);
    const float xs = 0.0637f, ys = std::is_same_v<Q, std::uint8_t> ? 1.0f / 256 : 0.047f;
    const int xz = std::is_same_v<Q, std::uint8_t> ? 128 : 3;
    const int yz = std::is_same_v<Q, std::uint8_t> ? 0 : -20;
    OneNodeSpec spec =
        nodeSpec(op, 1, {x, scale(xs), zeroPoint<Q>(xz), scale(ys), zeroPoint<Q>(yz)}, 1, kMs);
    if (op == "QLinearLeakyRelu")
        spec.attributes = [alpha](onnx::NodeProto& n) { setAttr(n, "alpha", alpha); };
    const Tensor y = runOneNodeTensor(spec);
    std::vector<Expected> expected(256);
    for (int i = 0; i < 256; ++i)
        expected[static_cast<std::size_t>(i)] =
            quantizeRef<Q>(f(xs * (static_cast<double>(x.data<Q>()[i]) - xz)), ys, yz);
    EXPECT_TRUE(matches<Q>(y, expected, {256}));
}

TEST(MsQLinearOps, SigmoidAndLeakyReluTablesCoverEveryCode) {
    const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    checkLookup<std::uint8_t>("QLinearSigmoid", 0, sigmoid);
    checkLookup<std::int8_t>("QLinearSigmoid", 0, sigmoid);
    const auto leaky = [](double alpha) {
        return [alpha](double v) {
            return v >= 0 ? v : static_cast<double>(static_cast<float>(alpha)) * v;
        };
    };
    checkLookup<std::uint8_t>("QLinearLeakyRelu", 0.25f, leaky(0.25));
    checkLookup<std::int8_t>("QLinearLeakyRelu", 0.1f, leaky(0.1));
    // alpha defaults to 0.01: -128 * 0.0625 * 0.01 = -0.08 -> -0.08 / 0.01 = -8.
    const Tensor y = runOneNodeTensor(nodeSpec(
        "QLinearLeakyRelu", 1,
        {makeTensor<std::int8_t>({2}, {-128, 16}), scale(0.0625f), Value(), scale(0.01f)}, 1, kMs));
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::int8_t>({2}, {-8, 100})));
}

// ---------------------------------------------------------------------------------------------
// QLinearConcat

TEST(MsQLinearOps, ConcatRequantizesEachInputToTheOutputParameters) {
    // uint8 along axis 1: X0 [2,2,3] with Y's own parameters (copied), X1 [2,1,3] rescaled.
    const Tensor x0 = randomCodes<std::uint8_t>({2, 2, 3}, 5);
    const Tensor x1 = randomCodes<std::uint8_t>({2, 1, 3}, 6);
    OneNodeSpec spec =
        nodeSpec("QLinearConcat", 1,
                 {scale(0.1f), zeroPoint<std::uint8_t>(128), x0, scale(0.1f),
                  zeroPoint<std::uint8_t>(128), x1, scale(0.037f), zeroPoint<std::uint8_t>(50)},
                 1, kMs);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{1}); };
    const Tensor y = runOneNodeTensor(spec);
    std::vector<Expected> expected;
    for (int n = 0; n < 2; ++n) {
        for (int i = 0; i < 6; ++i) expected.push_back({x0.data<std::uint8_t>()[n * 6 + i], false});
        for (int i = 0; i < 3; ++i)
            expected.push_back(quantizeRef<std::uint8_t>(
                0.037 * (x1.data<std::uint8_t>()[n * 3 + i] - 50.0), 0.1, 128));
    }
    EXPECT_TRUE(matches<std::uint8_t>(y, expected, {2, 3, 3}));

    // int8, three inputs along the last axis (-1), one of them empty there.
    const Tensor a = makeTensor<std::int8_t>({2, 1}, {-128, 127});
    const Tensor b = makeTensor<std::int8_t>({2, 2}, {10, -10, 0, 4});
    const Tensor empty(engine::DataType::Int8, {2, 0});
    OneNodeSpec s8 = nodeSpec(
        "QLinearConcat", 1,
        {scale(0.5f), zeroPoint<std::int8_t>(0), a, scale(0.25f), zeroPoint<std::int8_t>(-128),
         empty, scale(3.0f), zeroPoint<std::int8_t>(1), b, scale(1.0f), zeroPoint<std::int8_t>(2)},
        1, kMs);
    s8.attributes = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{-1}); };
    // a: 0.25 * (-128 + 128) = 0 -> 0; 0.25 * 255 = 63.75 -> 127.5 -> 127 (saturated from 128).
    // b: (10 - 2) = 8 -> 16; -12 -> -24; -2 -> -4; 2 -> 4.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(s8),
                             makeTensor<std::int8_t>({2, 3}, {0, 16, -24, 127, -4, 4})));
}

// ---------------------------------------------------------------------------------------------
// QLinearSoftmax

// The softmax of codes x (scale xs) over `length` values `stride` apart, quantized with y scale
// 1/256 and zero point yz.
template <class Q>
void softmaxRef(const Q* x, std::int64_t length, std::int64_t stride, double xs, int yz,
                std::vector<Expected>& out, std::int64_t base) {
    double largest = -1e300, sum = 0;
    for (std::int64_t i = 0; i < length; ++i) largest = std::max<double>(largest, x[i * stride]);
    for (std::int64_t i = 0; i < length; ++i) sum += std::exp(xs * (x[i * stride] - largest));
    for (std::int64_t i = 0; i < length; ++i)
        out[static_cast<std::size_t>(base + i * stride)] =
            quantizeRef<Q>(std::exp(xs * (x[i * stride] - largest)) / sum, 1.0 / 256, yz);
}

template <class Q>
void checkSoftmax(int opset, std::int64_t axis, unsigned seed) {
    SCOPED_TRACE("opset " + std::to_string(opset) + " axis " + std::to_string(axis));
    const Shape shape{2, 3, 4};
    const Tensor x = randomCodes<Q>(shape, seed);
    const int yz = std::is_same_v<Q, std::uint8_t> ? 0 : -128;
    const float xs = 0.03f;
    OneNodeSpec spec =
        nodeSpec("QLinearSoftmax", 1,
                 {x, scale(xs), zeroPoint<Q>(std::is_same_v<Q, std::uint8_t> ? 100 : 0),
                  scale(1.0f / 256), zeroPoint<Q>(yz)},
                 1, kMs);
    spec.attributes = [opset, axis](onnx::NodeProto& n) {
        setAttr(n, "opset", std::int64_t{opset});
        setAttr(n, "axis", axis);
    };
    const Tensor y = runOneNodeTensor(spec);
    std::vector<Expected> expected(24);
    const Q* p = x.data<Q>();
    if (opset >= 13 && axis == 1) {  // along dim 1: rows of 3, 4 apart
        for (int n = 0; n < 2; ++n)
            for (int k = 0; k < 4; ++k)
                softmaxRef(p + n * 12 + k, 3, 4, xs, yz, expected, n * 12 + k);
    } else if (opset >= 13) {  // axis 2: rows of 4
        for (int r = 0; r < 6; ++r) softmaxRef(p + r * 4, 4, 1, xs, yz, expected, r * 4);
    } else {  // opset 12, axis 1: dims 1 and 2 flattened, rows of 12
        for (int n = 0; n < 2; ++n) softmaxRef(p + n * 12, 12, 1, xs, yz, expected, n * 12);
    }
    EXPECT_TRUE(matches<Q>(y, expected, shape));
}

TEST(MsQLinearOps, SoftmaxOpset13UsesOneAxisAndOpset12FlattensFromIt) {
    checkSoftmax<std::uint8_t>(13, 1, 7);
    checkSoftmax<std::uint8_t>(13, -1, 8);
    checkSoftmax<std::uint8_t>(12, 1, 9);
    checkSoftmax<std::int8_t>(13, 1, 10);
    checkSoftmax<std::int8_t>(12, 1, 11);
    // The same data gives different results at opset 12 and 13 with axis 1.
    const Tensor x = randomCodes<std::uint8_t>({1, 2, 3}, 12);
    auto run = [&](int opset) {
        OneNodeSpec spec = nodeSpec("QLinearSoftmax", 1,
                                    {x, scale(0.1f), Value(), scale(1.0f / 256), Value()}, 1, kMs);
        spec.attributes = [opset](onnx::NodeProto& n) {
            setAttr(n, "opset", std::int64_t{opset});
            setAttr(n, "axis", std::int64_t{1});
        };
        return runOneNodeTensor(spec);
    };
    EXPECT_FALSE(tensorsClose(run(12), run(13)));
    // One element: probability 1 saturates (256 -> 255; int8 with zero point -128: 127).
    OneNodeSpec one = nodeSpec("QLinearSoftmax", 1,
                               {makeTensor<std::int8_t>({1, 1}, {5}), scale(0.1f), Value(),
                                scale(1.0f / 256), zeroPoint<std::int8_t>(-128)},
                               1, kMs);
    one.attributes = [](onnx::NodeProto& n) { setAttr(n, "opset", std::int64_t{13}); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(one), makeTensor<std::int8_t>({1, 1}, {127})));
}

// ---------------------------------------------------------------------------------------------
// QLinearAveragePool, QLinearGlobalAveragePool

struct PoolCase {
    Shape x;  // NCHW (1-D or 2-D spatial)
    std::vector<std::int64_t> kernel, strides, pads;
    bool ceil = false, includePad = false;
};

// Reference average pool on NCHW codes, ONNX Runtime's rule: taps inside the input, divided by
// the taps (or by the kernel size with count_include_pad).
template <class Q>
std::vector<Expected> averagePoolRef(const Tensor& x, const PoolCase& c, const Shape& outShape,
                                     double xs, int xz, double ys, int yz) {
    const std::size_t rank = c.kernel.size();
    const std::int64_t H = rank == 2 ? x.dim(2) : 1, W = x.dim(x.rank() - 1);
    const std::int64_t OH = rank == 2 ? outShape[2] : 1, OW = outShape.back();
    const std::int64_t KH = rank == 2 ? c.kernel[0] : 1, KW = c.kernel.back();
    const std::int64_t SH = rank == 2 ? c.strides[0] : 1, SW = c.strides.back();
    const std::int64_t PH = rank == 2 ? c.pads[0] : 0, PW = c.pads[rank - 1];
    std::vector<Expected> out;
    for (std::int64_t plane = 0; plane < x.dim(0) * x.dim(1); ++plane)
        for (std::int64_t oh = 0; oh < OH; ++oh)
            for (std::int64_t ow = 0; ow < OW; ++ow) {
                double sum = 0;
                std::int64_t taps = 0;
                for (std::int64_t kh = 0; kh < KH; ++kh)
                    for (std::int64_t kw = 0; kw < KW; ++kw) {
                        const std::int64_t h = oh * SH - PH + kh, w = ow * SW - PW + kw;
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        sum += xs * (x.data<Q>()[(plane * H + h) * W + w] - xz);
                        ++taps;
                    }
                out.push_back(quantizeRef<Q>(sum / (c.includePad ? KH * KW : taps), ys, yz));
            }
    return out;
}

template <class Q>
void checkAveragePool(const PoolCase& c, const Shape& outShape, unsigned seed) {
    SCOPED_TRACE("pool " + engine::shapeToString(c.x) + " kernel " +
                 engine::shapeToString(c.kernel) + (c.ceil ? " ceil" : "") +
                 (c.includePad ? " include_pad" : ""));
    const Tensor x = randomCodes<Q>(c.x, seed);
    const int xz = std::is_same_v<Q, std::uint8_t> ? 120 : -5, yz = xz + 3;
    const float xs = 0.07f, ys = 0.05f;
    auto spec = [&](const Tensor& input, bool channelsLast) {
        OneNodeSpec s =
            nodeSpec("QLinearAveragePool", 1,
                     {input, scale(xs), zeroPoint<Q>(xz), scale(ys), zeroPoint<Q>(yz)}, 1, kMs);
        s.attributes = [c, channelsLast](onnx::NodeProto& n) {
            setAttr(n, "kernel_shape", c.kernel);
            setAttr(n, "strides", c.strides);
            setAttr(n, "pads", c.pads);
            setAttr(n, "ceil_mode", std::int64_t{c.ceil});
            setAttr(n, "count_include_pad", std::int64_t{c.includePad});
            if (channelsLast) setAttr(n, "channels_last", std::int64_t{1});
        };
        return s;
    };
    const Tensor y = runOneNodeTensor(spec(x, false));
    const auto expected = averagePoolRef<Q>(x, c, outShape, xs, xz, ys, yz);
    EXPECT_TRUE(matches<Q>(y, expected, outShape));

    // channels_last: the same pool on the NHWC transpose gives the NHWC transpose.
    const std::int64_t N = c.x[0], C = c.x[1];
    const std::int64_t image = x.numel() / (N * C), outImage = y.numel() / (N * C);
    Shape nhwc{N};
    nhwc.insert(nhwc.end(), c.x.begin() + 2, c.x.end());
    nhwc.push_back(C);
    Tensor xt(x.dtype(), nhwc);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch)
            for (std::int64_t i = 0; i < image; ++i)
                xt.data<Q>()[(n * image + i) * C + ch] = x.data<Q>()[(n * C + ch) * image + i];
    const Tensor yt = runOneNodeTensor(spec(xt, true));
    ASSERT_EQ(yt.numel(), y.numel());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch)
            for (std::int64_t i = 0; i < outImage; ++i)
                ASSERT_EQ(yt.data<Q>()[(n * outImage + i) * C + ch],
                          y.data<Q>()[(n * C + ch) * outImage + i]);
}

TEST(MsQLinearOps, AveragePoolPadsCeilModeAndChannelsLast) {
    // 5x5, kernel 3, stride 2, pads 1: 3x3 outputs, corner windows hold 4 taps of 9.
    const PoolCase padded{{1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1, 1, 1}};
    PoolCase includePad = padded;
    includePad.includePad = true;
    // 6x6, kernel 3, stride 2, no pads, ceil mode: 3x3 outputs, the last window has 2 columns.
    const PoolCase ceil{{2, 3, 6, 6}, {3, 3}, {2, 2}, {0, 0, 0, 0}, true, false};
    PoolCase ceilInclude = ceil;
    ceilInclude.includePad = true;
    const PoolCase oneD{{1, 3, 7}, {2}, {1}, {1, 0}};
    for (unsigned seed : {1u, 2u}) {
        checkAveragePool<std::uint8_t>(padded, {1, 2, 3, 3}, seed);
        checkAveragePool<std::int8_t>(includePad, {1, 2, 3, 3}, seed);
        checkAveragePool<std::uint8_t>(ceil, {2, 3, 3, 3}, seed);
        checkAveragePool<std::int8_t>(ceilInclude, {2, 3, 3, 3}, seed);
        checkAveragePool<std::uint8_t>(oneD, {1, 3, 7}, seed);
    }
}

template <class Q>
void checkGlobalAverage(bool channelsLast, bool asAveragePool, unsigned seed) {
    SCOPED_TRACE(std::string(channelsLast ? "NHWC" : "NCHW") +
                 (asAveragePool ? " QLinearAveragePool with a whole-image kernel" : ""));
    const std::int64_t N = 2, C = 3, H = 4, W = 5;
    const Shape shape = channelsLast ? Shape{N, H, W, C} : Shape{N, C, H, W};
    const Tensor x = randomCodes<Q>(shape, seed);
    const int xz = std::is_same_v<Q, std::uint8_t> ? 128 : 7,
              yz = std::is_same_v<Q, std::uint8_t> ? 60 : -9;
    const float xs = 0.2f, ys = 0.03f;
    OneNodeSpec spec =
        nodeSpec(asAveragePool ? "QLinearAveragePool" : "QLinearGlobalAveragePool", 1,
                 {x, scale(xs), zeroPoint<Q>(xz), scale(ys), zeroPoint<Q>(yz)}, 1, kMs);
    spec.attributes = [&](onnx::NodeProto& n) {
        if (channelsLast) setAttr(n, "channels_last", std::int64_t{1});
        if (asAveragePool) setAttr(n, "kernel_shape", std::vector<std::int64_t>{H, W});
    };
    const Tensor y = runOneNodeTensor(spec);
    std::vector<Expected> expected;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c) {
            double sum = 0;
            for (std::int64_t i = 0; i < H * W; ++i)
                sum +=
                    x.data<Q>()[channelsLast ? (n * H * W + i) * C + c : (n * C + c) * H * W + i] -
                    xz;
            expected.push_back(quantizeRef<Q>(xs * sum / (H * W), ys, yz));
        }
    EXPECT_TRUE(matches<Q>(y, expected, channelsLast ? Shape{N, 1, 1, C} : Shape{N, C, 1, 1}));
}

TEST(MsQLinearOps, GlobalAveragePoolChannelsFirstAndLast) {
    for (bool last : {false, true})
        for (bool viaAveragePool : {false, true}) {
            checkGlobalAverage<std::uint8_t>(last, viaAveragePool, 3);
            checkGlobalAverage<std::int8_t>(last, viaAveragePool, 4);
        }
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs: errors naming the node and the input.

void expectError(const OneNodeSpec& spec, const std::string& fragment) {
    SCOPED_TRACE(spec.opType + ": " + fragment);
    auto r = runOneNode(spec);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("under_test"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
}

OneNodeSpec addSpec(Value aScale, Value aZero, Value cScale = scale(0.1f)) {
    const Tensor a = makeTensor<std::uint8_t>({2}, {1, 2});
    return nodeSpec("QLinearAdd", 1,
                    {a, std::move(aScale), std::move(aZero), a, scale(0.1f), Value(),
                     std::move(cScale), Value()},
                    1, kMs);
}

TEST(MsQLinearOps, BadScalesAndZeroPointsAreErrors) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    expectError(addSpec(scale(0.0f), Value()), "input 1 (A_scale) must be finite and non-zero");
    expectError(addSpec(scale(nan), Value()), "input 1 (A_scale) must be finite and non-zero");
    expectError(addSpec(scale(0.1f), Value(), scale(std::numeric_limits<float>::infinity())),
                "input 6 (C_scale) must be finite and non-zero");
    expectError(addSpec(makeTensor<float>({2}, {0.1f, 0.2f}), Value()),
                "input 1 (A_scale) must be a scalar or a 1-D tensor of one element");
    expectError(addSpec(scale(0.1f), zeroPoint<std::int8_t>(0)),
                "input 2 (A_zero_point) must be uint8");
    expectError(addSpec(scale(0.1f), makeTensor<std::uint8_t>({2}, {0, 0})),
                "input 2 (A_zero_point) must be a scalar");
    expectError(addSpec(scale(0.1f), Value(), Tensor::scalar<double>(0.1)),
                "input 6 (C_scale) must be float");
    // A negative scale is arithmetic: -0.5 * (4 - 0) + 0.5 * 2 = -1 -> 100 - 10.
    const Tensor y =
        runOneNodeTensor(nodeSpec("QLinearAdd", 1,
                                  {makeTensor<std::uint8_t>({1}, {4}), scale(-0.5f), Value(),
                                   makeTensor<std::uint8_t>({1}, {2}), scale(0.5f), Value(),
                                   scale(0.1f), zeroPoint<std::uint8_t>(100)},
                                  1, kMs));
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::uint8_t>({1}, {90})));
    // Mixed data types, float data, shapes that do not broadcast.
    expectError(nodeSpec("QLinearMul", 1,
                         {makeTensor<std::uint8_t>({2}, {1, 2}), scale(1), Value(),
                          makeTensor<std::int8_t>({2}, {1, 2}), scale(1), Value(), scale(1)},
                         1, kMs),
                "input 3 (B) must have A's type uint8");
    expectError(nodeSpec("QLinearSigmoid", 1,
                         {makeTensor<float>({1}, {1}), scale(1), Value(), scale(1)}, 1, kMs),
                "input 0 (X) must be uint8 or int8");
    expectError(nodeSpec("QLinearAdd", 1,
                         {makeTensor<std::uint8_t>({2}, {1, 2}), scale(1), Value(),
                          makeTensor<std::uint8_t>({3}, {1, 2, 3}), scale(1), Value(), scale(1)},
                         1, kMs),
                "broadcast");
    expectError(
        nodeSpec("QLinearLeakyRelu", 1, {makeTensor<std::uint8_t>({1}, {1}), scale(1)}, 1, kMs),
        "the operator takes 4 to 5");
}

TEST(MsQLinearOps, ConcatAndSoftmaxStructureErrors) {
    const Tensor a = makeTensor<std::uint8_t>({1, 2}, {1, 2});
    const Tensor b = makeTensor<std::uint8_t>({2, 2}, {1, 2, 3, 4});
    auto concat = [](std::vector<Value> inputs) {
        OneNodeSpec s = nodeSpec("QLinearConcat", 1, std::move(inputs), 1, kMs);
        s.attributes = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{1}); };
        return s;
    };
    const auto z = zeroPoint<std::uint8_t>(0);
    // 2 + 3k inputs: six is one short of a second triple.
    expectError(concat({scale(1), z, a, scale(1), z, a}), "2 + 3k inputs");
    expectError(concat({scale(1), z, a, scale(1), z, b, scale(1), z}),
                "input 5 (X1) has shape [2x2]");
    expectError(
        concat({scale(1), z, a, scale(1), z, makeTensor<std::uint8_t>({2}, {1, 2}), scale(1), z}),
        "input 5 (X1) has rank 1");
    expectError(concat({scale(1), z, a, scale(1), zeroPoint<std::int8_t>(0)}),
                "input 4 (X0_zero_point) must be uint8");
    expectError(concat({scale(1), z, a, scale(1), Value()}), "input 4 (X0_zero_point) is required");
    OneNodeSpec noAxis = nodeSpec("QLinearConcat", 1, {scale(1), z, a, scale(1), z}, 1, kMs);
    expectError(noAxis, "axis");

    OneNodeSpec softmax = nodeSpec("QLinearSoftmax", 1,
                                   {a, scale(0.1f), Value(), scale(1.0f / 256), Value()}, 1, kMs);
    expectError(softmax, "requires the attribute opset");
    softmax.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "opset", std::int64_t{13});
        setAttr(n, "axis", std::int64_t{2});
    };
    expectError(softmax, "axis");
}

TEST(MsQLinearOps, PoolShapeAndAttributeErrors) {
    const Tensor flat = makeTensor<std::uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto pool = [](const std::string& op, Tensor x, std::function<void(onnx::NodeProto&)> attrs) {
        OneNodeSpec s =
            nodeSpec(op, 1, {std::move(x), scale(0.1f), Value(), scale(0.1f), Value()}, 1, kMs);
        s.attributes = std::move(attrs);
        return s;
    };
    const auto kernel2 = [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", std::vector<std::int64_t>{2});
    };
    expectError(pool("QLinearGlobalAveragePool", flat, {}), "input 0 (X) must have rank 3 or more");
    expectError(pool("QLinearAveragePool", flat, kernel2), "input 0 (X) must have rank 3 or more");
    const Tensor x = randomCodes<std::uint8_t>({1, 1, 4, 4}, 1);
    expectError(pool("QLinearAveragePool", x, kernel2), "kernel rank 1");
    expectError(pool("QLinearAveragePool", x, {}), "requires kernel_shape");
    expectError(pool("QLinearAveragePool", x,
                     [](onnx::NodeProto& n) {
                         setAttr(n, "kernel_shape", std::vector<std::int64_t>{2, 2});
                         setAttr(n, "dilations", std::vector<std::int64_t>{2, 2});
                     }),
                "no dilations");
    expectError(pool("QLinearAveragePool", x,
                     [](onnx::NodeProto& n) {
                         setAttr(n, "kernel_shape", std::vector<std::int64_t>{1 << 20, 1 << 20});
                     }),
                "more than 2^24 taps");
    expectError(
        pool("QLinearAveragePool", x,
             [](onnx::NodeProto& n) {
                 setAttr(n, "kernel_shape", std::vector<std::int64_t>{2, 2});
                 setAttr(n, "pads", std::vector<std::int64_t>{0, 0, std::int64_t{1} << 40, 0});
             }),
        "below 2^31");
    // A kernel larger than the input gives an empty output, not an error.
    const Tensor empty = runOneNodeTensor(pool("QLinearAveragePool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", std::vector<std::int64_t>{5, 5});
    }));
    EXPECT_EQ(empty.shape(), (Shape{1, 1, 0, 0}));
}

}  // namespace
}  // namespace onnxlens::testing
