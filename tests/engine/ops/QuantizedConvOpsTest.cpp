// The int8 convolutions on oneDNN (ConvInteger, QLinearConv, com.onnxlens ConvIntegerToFloat)
// against integer loops written here, on random shapes: padding with nonzero zero points, groups,
// depthwise, strides, dilations, auto_pad, 1-D to 3-D, per-channel scales, and values at the ends
// of the 8-bit ranges (255 x 127 pairs overflow int16 in non-VNNI dot products).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../../../engine/ops/ByteTranspose.h"
#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

struct QuantConvCase {
    Shape x, w;  // X [N, C, spatial...], W [M, C/group, k...]
    std::vector<std::int64_t> strides, pads, dilations;
    std::int64_t group = 1;
    std::string autoPad;  // "" or SAME_UPPER / SAME_LOWER / VALID
    bool signedX = false;
};

// Output spatial sizes and the leading pads of each spatial dim.
struct Geometry {
    Shape out;
    std::vector<std::int64_t> padBegin;
};

Geometry geometryOf(const QuantConvCase& c) {
    const std::size_t rank = c.x.size() - 2;
    Geometry g;
    for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t s = c.strides.empty() ? 1 : c.strides[d];
        const std::int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
        const std::int64_t extent = (c.w[d + 2] - 1) * dil + 1, in = c.x[d + 2];
        if (c.autoPad == "SAME_UPPER" || c.autoPad == "SAME_LOWER") {
            const std::int64_t out = (in + s - 1) / s;
            const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + extent - in);
            g.padBegin.push_back(c.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2);
            g.out.push_back(out);
        } else {
            const std::int64_t pb = c.pads.empty() || c.autoPad == "VALID" ? 0 : c.pads[d];
            const std::int64_t pe = c.pads.empty() || c.autoPad == "VALID" ? 0 : c.pads[d + rank];
            g.padBegin.push_back(pb);
            g.out.push_back((in + pb + pe - extent) / s + 1);
        }
    }
    return g;
}

// sum((x - xzp) * w) over each window; padded taps hold the zero point (contribute 0).
std::vector<std::int32_t> integerConv(const QuantConvCase& c, const std::vector<int>& x, int xzp,
                                      const std::vector<int>& w, Shape& outShape) {
    const Geometry g = geometryOf(c);
    const std::size_t rank = c.x.size() - 2;
    const std::int64_t N = c.x[0], C = c.x[1], M = c.w[0], Cg = c.w[1], G = c.group;
    const std::int64_t Mg = M / G;
    outShape = {N, M};
    for (auto d : g.out) outShape.push_back(d);
    // Normalize to 3 spatial dims.
    auto dims3 = [&](const Shape& s, std::size_t first) {
        std::vector<std::int64_t> v(3, 1);
        for (std::size_t d = 0; d < rank; ++d) v[3 - rank + d] = s[first + d];
        return v;
    };
    auto attr3 = [&](const std::vector<std::int64_t>& a, std::int64_t fallback) {
        std::vector<std::int64_t> v(3, fallback);
        for (std::size_t d = 0; d < rank && !a.empty(); ++d) v[3 - rank + d] = a[d];
        return v;
    };
    const auto in = dims3(c.x, 2), k = dims3(c.w, 2), out = dims3(outShape, 2);
    const auto st = attr3(c.strides, 1), dl = attr3(c.dilations, 1);
    std::vector<std::int64_t> pb(3, 0);
    for (std::size_t d = 0; d < rank; ++d) pb[3 - rank + d] = g.padBegin[d];
    std::vector<std::int32_t> y(static_cast<std::size_t>(N * M * out[0] * out[1] * out[2]), 0);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m) {
            const std::int64_t group = m / Mg;
            for (std::int64_t oz = 0; oz < out[0]; ++oz)
                for (std::int64_t oy = 0; oy < out[1]; ++oy)
                    for (std::int64_t ox = 0; ox < out[2]; ++ox) {
                        std::int64_t acc = 0;
                        for (std::int64_t c0 = 0; c0 < Cg; ++c0)
                            for (std::int64_t kz = 0; kz < k[0]; ++kz)
                                for (std::int64_t ky = 0; ky < k[1]; ++ky)
                                    for (std::int64_t kx = 0; kx < k[2]; ++kx) {
                                        const std::int64_t iz = oz * st[0] - pb[0] + kz * dl[0];
                                        const std::int64_t iy = oy * st[1] - pb[1] + ky * dl[1];
                                        const std::int64_t ix = ox * st[2] - pb[2] + kx * dl[2];
                                        if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] ||
                                            ix < 0 || ix >= in[2])
                                            continue;
                                        const std::int64_t ch = group * Cg + c0;
                                        const int xv = x[static_cast<std::size_t>(
                                            (((n * C + ch) * in[0] + iz) * in[1] + iy) * in[2] +
                                            ix)];
                                        const int wv = w[static_cast<std::size_t>(
                                            (((m * Cg + c0) * k[0] + kz) * k[1] + ky) * k[2] + kx)];
                                        acc += static_cast<std::int64_t>(xv - xzp) * wv;
                                    }
                        y[static_cast<std::size_t>(
                            (((n * M + m) * out[0] + oz) * out[1] + oy) * out[2] + ox)] =
                            static_cast<std::int32_t>(acc);
                    }
        }
    return y;
}

// Random 8-bit values, a quarter of them at the ends of the range.
std::vector<int> randomBytes(std::int64_t count, bool isSigned, std::mt19937& rng) {
    const int lo = isSigned ? -128 : 0, hi = isSigned ? 127 : 255;
    std::uniform_int_distribution<int> dist(lo, hi), pick(0, 7);
    std::vector<int> v(static_cast<std::size_t>(count));
    for (auto& e : v) {
        const int p = pick(rng);
        e = p == 0 ? hi : p == 1 ? lo : dist(rng);
    }
    return v;
}

// Mostly values below 128 once moved to uint8 (int8 + 128), one in 20 at the top of the range:
// the kernel then adds the high bit back sparsely on processors without VNNI.
std::vector<int> mostlyLowBytes(std::int64_t count, bool isSigned, std::mt19937& rng) {
    std::uniform_int_distribution<int> dist(0, 100), pick(0, 19);
    std::vector<int> v(static_cast<std::size_t>(count));
    for (auto& e : v) e = (pick(rng) == 0 ? 255 : dist(rng)) - (isSigned ? 128 : 0);
    return v;
}

Tensor bytesTensor(const Shape& shape, const std::vector<int>& v, bool isSigned) {
    if (isSigned)
        return makeTensor<std::int8_t>(shape, std::vector<std::int8_t>(v.begin(), v.end()));
    return makeTensor<std::uint8_t>(shape, std::vector<std::uint8_t>(v.begin(), v.end()));
}

std::function<void(onnx::NodeProto&)> convAttributes(const QuantConvCase& c) {
    return [c](onnx::NodeProto& n) {
        if (!c.strides.empty()) setAttr(n, "strides", c.strides);
        if (!c.pads.empty()) setAttr(n, "pads", c.pads);
        if (!c.dilations.empty()) setAttr(n, "dilations", c.dilations);
        if (c.group != 1) setAttr(n, "group", c.group);
        if (!c.autoPad.empty()) setAttr(n, "auto_pad", c.autoPad);
    };
}

QuantConvCase convCase(Shape x, Shape w, std::vector<std::int64_t> strides = {},
                       std::vector<std::int64_t> pads = {},
                       std::vector<std::int64_t> dilations = {}, std::int64_t group = 1,
                       std::string autoPad = "", bool signedX = false) {
    return QuantConvCase{std::move(x),         std::move(w), std::move(strides), std::move(pads),
                         std::move(dilations), group,        std::move(autoPad), signedX};
}

const std::vector<QuantConvCase>& cases() {
    static const std::vector<QuantConvCase> all = {
        // ResNet-like 3x3, padded, uint8 with a zero point >= 128 in the padding.
        convCase({1, 16, 9, 11}, {24, 16, 3, 3}, {}, {1, 1, 1, 1}),
        // Strided, asymmetric pads, batch 2, int8 source.
        convCase({2, 12, 10, 9}, {8, 12, 3, 3}, {2, 2}, {0, 1, 2, 1}, {}, 1, "", true),
        // Dilated, grouped.
        convCase({1, 8, 12, 12}, {12, 4, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 2),
        // Depthwise with stride 2.
        convCase({1, 32, 14, 14}, {32, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 32),
        // Depthwise channel multiplier 2, int8.
        convCase({1, 6, 8, 8}, {12, 1, 5, 5}, {}, {2, 2, 2, 2}, {}, 6, "", true),
        // Pointwise, odd channel counts.
        convCase({1, 37, 7, 5}, {19, 37, 1, 1}),
        // 72 output channels: requantized 32 at a time, then a tail of 8.
        convCase({1, 16, 6, 5}, {72, 16, 1, 1}),
        // Rows and channels of whole 16 x 16 byte blocks and of partial ones (the layout moves
        // to and from channels-last), 630 output pixels (64-pixel tiles and a partial one).
        convCase({1, 40, 18, 35}, {24, 40, 3, 3}, {}, {1, 1, 1, 1}),
        // First-layer shape: 3 channels, 7x7 stride 2.
        convCase({1, 3, 23, 23}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}),
        // auto_pad.
        convCase({1, 8, 10, 7}, {8, 8, 4, 3}, {2, 1}, {}, {}, 1, "SAME_UPPER"),
        convCase({1, 8, 10, 7}, {8, 8, 4, 3}, {2, 2}, {}, {}, 1, "SAME_LOWER", true),
        convCase({1, 8, 10, 7}, {8, 8, 3, 3}, {}, {}, {}, 1, "VALID"),
        // 1-D and 3-D.
        convCase({2, 10, 30}, {6, 10, 5}, {2}, {2, 1}, {2}),
        convCase({1, 4, 5, 6, 7}, {8, 4, 3, 3, 3}, {1, 2, 1}, {1, 1, 1, 1, 0, 1}),
    };
    return all;
}

// The byte transposes that move 8-bit tensors to and from channels-last: every byte of every
// shape lands in its place (whole 16 x 16 blocks, partial rows and columns, fewer than 8 rows,
// strides wider than the matrix), moved to uint8 by the flip, and nothing outside is written.
TEST(QuantizedConvOps, ByteTransposeMovesEveryByteToItsPlace) {
    for (std::int64_t rows : {1, 3, 7, 8, 15, 16, 17, 40, 64, 65, 130})
        for (std::int64_t cols : {1, 5, 16, 23, 64, 70}) {
            for (std::uint8_t flip : {0, 0x80}) {
                const std::int64_t inStride = cols + 3, outStride = rows + 5;
                std::vector<std::uint8_t> in(static_cast<std::size_t>(rows * inStride));
                for (std::size_t i = 0; i < in.size(); ++i)
                    in[i] = static_cast<std::uint8_t>(i * 37 + i / 251);
                std::vector<std::uint8_t> out(static_cast<std::size_t>(cols * outStride), 0xA5);
                engine::ops::transposeBytes(in.data(), rows, cols, inStride, out.data(), outStride,
                                            flip);
                for (std::int64_t c = 0; c < cols; ++c)
                    for (std::int64_t r = 0; r < outStride; ++r) {
                        const auto got = out[static_cast<std::size_t>(c * outStride + r)];
                        const auto want =
                            r < rows ? static_cast<std::uint8_t>(
                                           in[static_cast<std::size_t>(r * inStride + c)] ^ flip)
                                     : std::uint8_t{0xA5};
                        ASSERT_EQ(got, want) << rows << "x" << cols << " flip " << int(flip)
                                             << " at column " << c << " row " << r;
                    }
            }
        }
}

TEST(QuantizedConvOps, ConvIntegerEqualsTheIntegerLoopOnRandomShapes) {
    std::mt19937 rng(5);
    for (const auto& c : cases()) {
        SCOPED_TRACE(engine::shapeToString(c.x) + " * " + engine::shapeToString(c.w));
        const auto w = randomBytes(engine::shapeElementCount(c.w), true, rng);
        for (bool sparseHigh : {false, true})
            for (int zp :
                 c.signedX ? std::vector<int>{0, -77, 127} : std::vector<int>{0, 131, 255}) {
                const auto x = sparseHigh
                                   ? mostlyLowBytes(engine::shapeElementCount(c.x), c.signedX, rng)
                                   : randomBytes(engine::shapeElementCount(c.x), c.signedX, rng);
                OneNodeSpec spec{"ConvInteger",
                                 "",
                                 17,
                                 {bytesTensor(c.x, x, c.signedX), bytesTensor(c.w, w, true),
                                  bytesTensor({}, {zp}, c.signedX), bytesTensor({}, {0}, true)}};
                spec.attributes = convAttributes(c);
                Shape shape;
                const auto expected = integerConv(c, x, zp, w, shape);
                const Tensor y = runOneNodeTensor(spec);
                ASSERT_EQ(y.dtype(), DataType::Int32);
                ASSERT_EQ(y.shape(), shape);
                for (std::size_t i = 0; i < expected.size(); ++i)
                    ASSERT_EQ(y.data<std::int32_t>()[i], expected[i])
                        << "zero point " << zp << " at " << i;
            }
    }
}

TEST(QuantizedConvOps, ConvIntegerAtTheEndsOfTheRangesIsExact) {
    // Every product 255 x 127 or 255 x -128: pairs of them overflow int16.
    const QuantConvCase c = convCase({1, 64, 6, 6}, {16, 64, 3, 3}, {}, {1, 1, 1, 1});
    std::vector<int> x(static_cast<std::size_t>(engine::shapeElementCount(c.x)), 255);
    std::vector<int> w(static_cast<std::size_t>(engine::shapeElementCount(c.w)));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i / 576) % 2 ? -128 : 127;
    for (int zp : {0, 255}) {
        OneNodeSpec spec{
            "ConvInteger",
            "",
            17,
            {bytesTensor(c.x, x, false), bytesTensor(c.w, w, true), bytesTensor({}, {zp}, false)}};
        spec.attributes = convAttributes(c);
        Shape shape;
        const auto expected = integerConv(c, x, zp, w, shape);
        const Tensor y = runOneNodeTensor(spec);
        for (std::size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ(y.data<std::int32_t>()[i], expected[i]) << "zero point " << zp << " at " << i;
    }
}

// 7-bit weights (every |w| <= 64: quantize_static's reduce_range) take the one-convolution path
// on processors without VNNI, with the whole 8-bit source: exact at the ends of the ranges (255 x
// 64 and 255 x -64 in every pair), on every case shape, and a session whose weights change from
// 7-bit to full-range and back follows them (a weight of 65 or -65 needs the split again).
TEST(QuantizedConvOps, SevenBitWeightsAreExactOnTheWholeSource) {
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> sevenBit(-64, 64);
    for (const auto& c : cases()) {
        SCOPED_TRACE(engine::shapeToString(c.x) + " * " + engine::shapeToString(c.w));
        std::vector<int> w(static_cast<std::size_t>(engine::shapeElementCount(c.w)));
        for (std::size_t i = 0; i < w.size(); ++i)
            w[i] = i % 5 == 0 ? (i % 2 ? 64 : -64) : sevenBit(rng);
        const auto x = randomBytes(engine::shapeElementCount(c.x), c.signedX, rng);
        const int zp = c.signedX ? -77 : 131;
        OneNodeSpec spec{"ConvInteger",
                         "",
                         17,
                         {bytesTensor(c.x, x, c.signedX), bytesTensor(c.w, w, true),
                          bytesTensor({}, {zp}, c.signedX), bytesTensor({}, {0}, true)}};
        spec.attributes = convAttributes(c);
        Shape shape;
        const auto expected = integerConv(c, x, zp, w, shape);
        const Tensor y = runOneNodeTensor(spec);
        ASSERT_EQ(y.shape(), shape);
        for (std::size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ(y.data<std::int32_t>()[i], expected[i]) << "at " << i;
    }
    const QuantConvCase c = convCase({1, 64, 6, 6}, {16, 64, 3, 3}, {}, {1, 1, 1, 1});
    std::vector<int> x(static_cast<std::size_t>(engine::shapeElementCount(c.x)), 255);
    OneNodeSpec spec{
        "ConvInteger",
        "",
        17,
        {bytesTensor(c.x, x, false), bytesTensor(c.w, std::vector<int>(9216, 64), true),
         bytesTensor({}, {0}, false)}};
    spec.attributes = convAttributes(c);
    LoadedModel loaded;
    loaded.path = "conv_integer_7bit.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(buildOneNodeModel(spec));
    auto session = engine::Session::create(loaded, {});
    ASSERT_TRUE(session) << session.error().message;
    for (int limit : {64, 65, 64, 127, 64}) {
        std::vector<int> w(9216);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i / 576) % 2 ? -limit : limit;
        auto out = (*session)->run({{"x0", spec.inputs[0]},
                                    {"x1", Value(bytesTensor(c.w, w, true))},
                                    {"x2", spec.inputs[2]}});
        ASSERT_TRUE(out) << out.error().message;
        Shape shape;
        const auto expected = integerConv(c, x, 0, w, shape);
        for (std::size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ((*out)[0].tensor().data<std::int32_t>()[i], expected[i])
                << "|w| " << limit << " at " << i;
    }
}

// The kernel keeps the reordered weights while the same weight buffer comes back: new weights of
// the same shape in the next run must be seen.
TEST(QuantizedConvOps, NewWeightsOfTheSameShapeAreSeen) {
    const QuantConvCase c = convCase({1, 8, 6, 6}, {8, 8, 3, 3}, {}, {1, 1, 1, 1});
    std::mt19937 rng(9);
    const auto x = randomBytes(engine::shapeElementCount(c.x), false, rng);
    OneNodeSpec spec{
        "ConvInteger",
        "",
        17,
        {bytesTensor(c.x, x, false), bytesTensor(c.w, randomBytes(576, true, rng), true),
         bytesTensor({}, {200}, false)}};
    spec.attributes = convAttributes(c);
    LoadedModel loaded;
    loaded.path = "conv_integer.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(buildOneNodeModel(spec));
    auto session = engine::Session::create(loaded, {});
    ASSERT_TRUE(session) << session.error().message;
    for (int round = 0; round < 3; ++round) {
        const auto w = randomBytes(576, true, rng);
        auto out = (*session)->run({{"x0", spec.inputs[0]},
                                    {"x1", Value(bytesTensor(c.w, w, true))},
                                    {"x2", spec.inputs[2]}});
        ASSERT_TRUE(out) << out.error().message;
        Shape shape;
        const auto expected = integerConv(c, x, 200, w, shape);
        for (std::size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ((*out)[0].tensor().data<std::int32_t>()[i], expected[i]) << round;
    }
}

TEST(QuantizedConvOps, QLinearConvEqualsTheRequantizedIntegerLoop) {
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> scaleDist(0.001f, 0.02f);
    std::uniform_int_distribution<int> biasDist(-5000, 5000);
    for (const auto& c : cases()) {
        SCOPED_TRACE(engine::shapeToString(c.x) + " * " + engine::shapeToString(c.w));
        const std::int64_t M = c.w[0];
        const auto x = randomBytes(engine::shapeElementCount(c.x), c.signedX, rng);
        const auto w = randomBytes(engine::shapeElementCount(c.w), true, rng);
        const int xzp = c.signedX ? -20 : 140;
        for (bool perChannel : {false, true}) {
            for (int variant = 0; variant < 4; ++variant) {
                // Zero point 0 (oneDNN requantizes itself) and another, each output type.
                const bool signedY = variant % 2 == 1;
                const int yzp = variant < 2 ? 0 : (signedY ? 3 : 120);
                std::vector<float> wScale(perChannel ? static_cast<std::size_t>(M) : 1);
                for (auto& s : wScale) s = scaleDist(rng);
                std::vector<std::int32_t> bias(static_cast<std::size_t>(M));
                for (auto& b : bias) b = biasDist(rng);
                const float xScale = 0.05f, yScale = 1.5f;
                OneNodeSpec spec{
                    "QLinearConv",
                    "",
                    17,
                    {bytesTensor(c.x, x, c.signedX), makeTensor<float>({}, {xScale}),
                     bytesTensor({}, {xzp}, c.signedX), bytesTensor(c.w, w, true),
                     perChannel ? makeTensor<float>({M}, wScale) : makeTensor<float>({}, wScale),
                     bytesTensor({}, {0}, true), makeTensor<float>({}, {yScale}),
                     bytesTensor({}, {yzp}, signedY), makeTensor<std::int32_t>({M}, bias)}};
                spec.attributes = convAttributes(c);
                Shape shape;
                const auto acc = integerConv(c, x, xzp, w, shape);
                const Tensor y = runOneNodeTensor(spec);
                ASSERT_EQ(y.shape(), shape);
                ASSERT_EQ(y.dtype(), signedY ? DataType::Int8 : DataType::UInt8);
                const std::int64_t plane = engine::shapeElementCount(shape) / (shape[0] * M);
                for (std::size_t i = 0; i < acc.size(); ++i) {
                    const auto m =
                        static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % M);
                    const double ws = wScale[perChannel ? m : 0];
                    const float scaled = static_cast<float>(acc[i] + bias[m]) *
                                         static_cast<float>(double{xScale} * ws / double{yScale});
                    const double q = std::nearbyint(static_cast<double>(scaled)) + yzp;
                    const double lo = signedY ? -128 : 0, hi = signedY ? 127 : 255;
                    const int expected = static_cast<int>(std::clamp(q, lo, hi));
                    const int actual =
                        signedY ? y.data<std::int8_t>()[i] : y.data<std::uint8_t>()[i];
                    ASSERT_EQ(actual, expected) << i;
                }
            }
        }
    }
}

TEST(QuantizedConvOps, ConvIntegerToFloatScalesAddsTheBiasAndActivates) {
    std::mt19937 rng(33);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    for (const auto& c : cases()) {
        SCOPED_TRACE(engine::shapeToString(c.x) + " * " + engine::shapeToString(c.w));
        const std::int64_t M = c.w[0];
        const auto x = randomBytes(engine::shapeElementCount(c.x), c.signedX, rng);
        const auto w = randomBytes(engine::shapeElementCount(c.w), true, rng);
        const int xzp = c.signedX ? 9 : 97;
        std::vector<float> wScale(static_cast<std::size_t>(M)), bias(wScale.size());
        for (auto& s : wScale) s = 0.01f + 0.02f * std::abs(dist(rng));
        for (auto& b : bias) b = dist(rng);
        const float xScale = 0.0173f;
        for (bool relu : {false, true}) {
            OneNodeSpec spec{
                "ConvIntegerToFloat",
                "com.onnxlens",
                1,
                {bytesTensor(c.x, x, c.signedX), bytesTensor(c.w, w, true),
                 makeTensor<float>({}, {xScale}), makeTensor<float>({M, 1}, wScale),
                 bytesTensor({}, {xzp}, c.signedX), Value(), makeTensor<float>({M}, bias)}};
            spec.attributes = [c, relu](onnx::NodeProto& n) {
                convAttributes(c)(n);
                if (relu) setAttr(n, "activation", std::string("Relu"));
            };
            Shape shape;
            const auto acc = integerConv(c, x, xzp, w, shape);
            const Tensor y = runOneNodeTensor(spec);
            ASSERT_EQ(y.shape(), shape);
            const std::int64_t plane = engine::shapeElementCount(shape) / (shape[0] * M);
            for (std::size_t i = 0; i < acc.size(); ++i) {
                const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % M);
                float expected = static_cast<float>(acc[i]) * (xScale * wScale[m]) + bias[m];
                if (relu) expected = std::max(expected, 0.0f);
                // One rounding of acc * scale + bias may differ (a fused multiply-add).
                ASSERT_NEAR(y.data<float>()[i], expected,
                            1e-6f * std::max(1.0f, std::abs(expected)))
                    << i;
            }
        }
    }
}

}  // namespace
}  // namespace onnxlens::testing
