// com.microsoft DynamicQuantizeLSTM against a double-precision reference written here: W and R
// dequantized exactly ((q - zero_point) * scale, per direction or per gate column), X quantized to
// uint8 over the steps some row reaches and the hidden state before each step over the rows the
// step reads (range widened to hold 0, scale (max - min) / 255, zero point rounded half to even,
// values rounded half to even), then the LSTM equations one batch row at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "MsOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

const std::string kMs = "com.microsoft";

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct DqCase {
    std::int64_t seq = 3, batch = 2, input = 3, hidden = 2;
    std::string direction = "forward";
    std::vector<std::int32_t> lengths = {};  // empty: all full length
    bool perChannel = false;
    bool signedW = true, signedR = true;
    bool withBias = true, withInitial = true, withPeepholes = false, inputForget = false;
    float clip = 0;
    unsigned seed = 7;

    std::int64_t directions() const { return direction == "bidirectional" ? 2 : 1; }
};

// One 8-bit weight tensor [D, K, 4H] with its scales and zero points ([D] or [D, 4H]).
struct QuantWeights {
    std::vector<std::int32_t> q;
    std::vector<float> scale;
    std::vector<std::int32_t> zero;
    bool isSigned = true;
    std::int64_t k = 0, n = 0, count = 1;  // count: scales per direction

    double value(std::int64_t d, std::int64_t row, std::int64_t col) const {
        const std::int64_t s = d * count + (count == 1 ? 0 : col);
        return (q[(d * k + row) * n + col] - zero[s]) * double(scale[s]);
    }
};

QuantWeights makeWeights(std::int64_t D, std::int64_t k, std::int64_t n, bool isSigned,
                         bool perChannel, std::mt19937& rng) {
    QuantWeights w;
    w.isSigned = isSigned;
    w.k = k;
    w.n = n;
    w.count = perChannel ? n : 1;
    std::uniform_int_distribution<int> values(isSigned ? -128 : 0, isSigned ? 127 : 255);
    for (std::int64_t i = 0; i < D * k * n; ++i) w.q.push_back(values(rng));
    std::uniform_real_distribution<float> scales(0.002f, 0.006f);
    for (std::int64_t i = 0; i < D * w.count; ++i) {
        w.scale.push_back(scales(rng));
        // int8: zero point 0 per column (as ONNX Runtime requires), a small one per tensor;
        // uint8: one value near the middle per direction.
        w.zero.push_back(isSigned ? (perChannel ? 0 : static_cast<int>(i) - 3)
                                  : 120 + static_cast<int>(i / w.count) * 9);
    }
    return w;
}

struct DqData {
    std::vector<float> x, b, h0, c0, p;  // layout 0
    QuantWeights w, r;
};

DqData makeData(const DqCase& c) {
    std::mt19937 rng(c.seed);
    auto values = [&](std::size_t n, float range) {
        std::uniform_real_distribution<float> dist(-range, range);
        std::vector<float> v(n);
        for (auto& x : v) x = dist(rng);
        return v;
    };
    const std::int64_t D = c.directions(), H = c.hidden;
    DqData d;
    d.x = values(c.seq * c.batch * c.input, 1.5f);
    d.b = values(D * 8 * H, 0.3f);
    d.h0 = values(D * c.batch * H, 0.6f);
    d.c0 = values(D * c.batch * H, 0.6f);
    d.p = values(D * 3 * H, 0.4f);
    d.w = makeWeights(D, c.input, 4 * H, c.signedW, c.perChannel, rng);
    d.r = makeWeights(D, H, 4 * H, c.signedR, c.perChannel, rng);
    return d;
}

// The dynamic uint8 quantization of `values` over the range of `rangeValues`, dequantized.
std::vector<double> quantizeDequantize(const std::vector<float>& values,
                                       const std::vector<float>& rangeValues) {
    float low = 0.0f, high = 0.0f;
    for (float v : rangeValues) {
        low = std::min(low, v);
        high = std::max(high, v);
    }
    const float scale = high == low ? 1.0f : (high - low) / 255.0f;
    const float zero = std::nearbyint(std::clamp(-low / scale, 0.0f, 255.0f));
    std::vector<double> out;
    for (float v : values) {
        const float q = std::clamp(std::nearbyint(v / scale) + zero, 0.0f, 255.0f);
        out.push_back((double(q) - zero) * double(scale));
    }
    return out;
}

struct DqOutputs {
    std::vector<double> y, yH, yC;  // Y [seq, D, batch, H], states [D, batch, H]
};

DqOutputs reference(const DqCase& c, const DqData& d) {
    const std::int64_t D = c.directions(), H = c.hidden, I = c.input, B = c.batch;
    std::vector<std::int64_t> lengths(B, c.seq);
    if (!c.lengths.empty()) lengths.assign(c.lengths.begin(), c.lengths.end());
    const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    // X over the steps some row reaches.
    const std::vector<float> xUsed(d.x.begin(), d.x.begin() + longest * B * I);
    const std::vector<double> xq = quantizeDequantize(xUsed, xUsed);
    auto clipped = [&](double v) {
        return c.clip > 0 ? std::clamp(v, -double(c.clip), double(c.clip)) : v;
    };

    DqOutputs out;
    out.y.assign(c.seq * D * B * H, 0.0);
    out.yH.assign(D * B * H, 0.0);
    out.yC.assign(D * B * H, 0.0);
    for (std::int64_t dir = 0; dir < D; ++dir) {
        const bool reverse = c.direction == "reverse" || dir == 1;
        std::vector<double> h(B * H, 0.0), cs(B * H, 0.0);
        if (c.withInitial)
            for (std::int64_t i = 0; i < B * H; ++i) {
                h[i] = d.h0[dir * B * H + i];
                cs[i] = d.c0[dir * B * H + i];
            }
        auto bias = [&](std::int64_t col) {
            return c.withBias ? double(d.b[dir * 8 * H + col]) + d.b[dir * 8 * H + 4 * H + col]
                              : 0.0;
        };
        auto P = [&](int which, std::int64_t j) {
            return c.withPeepholes ? double(d.p[dir * 3 * H + which * H + j]) : 0.0;
        };
        for (std::int64_t s = 0; s < c.seq; ++s) {
            // The state as the kernel holds it (float), quantized over the rows the step reads.
            std::vector<float> hFloat(h.begin(), h.end()), hRange;
            for (std::int64_t b = 0; b < B; ++b)
                if (lengths[b] >= s)
                    hRange.insert(hRange.end(), hFloat.begin() + b * H,
                                  hFloat.begin() + (b + 1) * H);
            const std::vector<double> hq = quantizeDequantize(hFloat, hRange);
            std::vector<double> hNext = h, cNext = cs;
            for (std::int64_t b = 0; b < B; ++b) {
                if (s >= lengths[b]) continue;
                const std::int64_t t = reverse ? lengths[b] - 1 - s : s;
                auto pre = [&](std::int64_t col) {
                    double acc = bias(col);
                    for (std::int64_t k = 0; k < I; ++k)
                        acc += xq[(t * B + b) * I + k] * d.w.value(dir, k, col);
                    for (std::int64_t k = 0; k < H; ++k)
                        acc += hq[b * H + k] * d.r.value(dir, k, col);
                    return acc;
                };
                for (std::int64_t j = 0; j < H; ++j) {
                    const double cPrev = cs[b * H + j];
                    const double i = sigmoid(clipped(pre(j) + P(0, j) * cPrev));
                    const double f =
                        c.inputForget ? 1 - i : sigmoid(clipped(pre(2 * H + j) + P(2, j) * cPrev));
                    const double g = std::tanh(clipped(pre(3 * H + j)));
                    const double cNew = f * cPrev + i * g;
                    const double o = sigmoid(clipped(pre(H + j) + P(1, j) * cNew));
                    cNext[b * H + j] = cNew;
                    hNext[b * H + j] = o * std::tanh(cNew);
                    out.y[((t * D + dir) * B + b) * H + j] = hNext[b * H + j];
                }
            }
            h = hNext;
            cs = cNext;
        }
        std::copy(h.begin(), h.end(), out.yH.begin() + dir * B * H);
        std::copy(cs.begin(), cs.end(), out.yC.begin() + dir * B * H);
    }
    return out;
}

Tensor eightBit(const Shape& shape, const std::vector<std::int32_t>& values, bool isSigned) {
    if (isSigned) return makeTensor<std::int8_t>(shape, {values.begin(), values.end()});
    return makeTensor<std::uint8_t>(shape, {values.begin(), values.end()});
}

OneNodeSpec specFor(const DqCase& c, const DqData& d) {
    const std::int64_t D = c.directions(), H = c.hidden;
    OneNodeSpec spec;
    spec.opType = "DynamicQuantizeLSTM";
    spec.domain = kMs;
    spec.opset = 1;
    spec.outputCount = 3;
    spec.inputs.push_back(makeTensor<float>({c.seq, c.batch, c.input}, d.x));
    spec.inputs.push_back(eightBit({D, c.input, 4 * H}, d.w.q, d.w.isSigned));
    spec.inputs.push_back(eightBit({D, H, 4 * H}, d.r.q, d.r.isSigned));
    spec.inputs.push_back(c.withBias ? Value(makeTensor<float>({D, 8 * H}, d.b)) : Value());
    spec.inputs.push_back(
        c.lengths.empty() ? Value() : Value(makeTensor<std::int32_t>({c.batch}, c.lengths)));
    spec.inputs.push_back(c.withInitial ? Value(makeTensor<float>({D, c.batch, H}, d.h0))
                                        : Value());
    spec.inputs.push_back(c.withInitial ? Value(makeTensor<float>({D, c.batch, H}, d.c0))
                                        : Value());
    spec.inputs.push_back(c.withPeepholes ? Value(makeTensor<float>({D, 3 * H}, d.p)) : Value());
    const Shape scaleShape = c.perChannel ? Shape{D, 4 * H} : Shape{D};
    spec.inputs.push_back(makeTensor<float>(scaleShape, d.w.scale));
    spec.inputs.push_back(eightBit(scaleShape, d.w.zero, d.w.isSigned));
    spec.inputs.push_back(makeTensor<float>(scaleShape, d.r.scale));
    spec.inputs.push_back(eightBit(scaleShape, d.r.zero, d.r.isSigned));
    spec.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "hidden_size", c.hidden);
        setAttr(n, "direction", c.direction);
        if (c.clip > 0) setAttr(n, "clip", c.clip);
        if (c.inputForget) setAttr(n, "input_forget", std::int64_t{1});
    };
    return spec;
}

Tensor floats(const Shape& shape, const std::vector<double>& values) {
    return makeTensor<float>(shape, std::vector<float>(values.begin(), values.end()));
}

void expectMatchesReference(const DqCase& c, int threads = 1) {
    SCOPED_TRACE(c.direction + (c.perChannel ? " per-channel" : " per-tensor") +
                 (c.signedW ? " s8 W" : " u8 W") + (c.signedR ? " s8 R" : " u8 R") + " seed " +
                 std::to_string(c.seed));
    const DqData d = makeData(c);
    const DqOutputs expected = reference(c, d);
    auto result = runOneNode(specFor(c, d), threads);
    ASSERT_TRUE(result) << result.error().message;
    const std::int64_t D = c.directions(), H = c.hidden;
    const engine::Tolerance tolerance{1e-4, 1e-5};
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({c.seq, D, c.batch, H}, expected.y),
                             tolerance));
    EXPECT_TRUE(
        tensorsClose(result->at(1).tensor(), floats({D, c.batch, H}, expected.yH), tolerance));
    EXPECT_TRUE(
        tensorsClose(result->at(2).tensor(), floats({D, c.batch, H}, expected.yC), tolerance));
}

TEST(MsDynamicQuantizeLstm, ForwardPerTensorMatchesTheReference) {
    expectMatchesReference({});
    expectMatchesReference({.signedW = false, .signedR = false, .seed = 3});
    expectMatchesReference(
        {.signedW = true, .signedR = false, .withBias = false, .withInitial = false, .seed = 5});
}

TEST(MsDynamicQuantizeLstm, PerChannelScalesMatchTheReference) {
    expectMatchesReference({.perChannel = true});
    expectMatchesReference({.perChannel = true, .signedW = false, .signedR = false, .seed = 11});
}

TEST(MsDynamicQuantizeLstm, ReverseAndBidirectionalMatchTheReference) {
    expectMatchesReference({.direction = "reverse"});
    expectMatchesReference({.seq = 4,
                            .batch = 3,
                            .hidden = 3,
                            .direction = "bidirectional",
                            .perChannel = true,
                            .seed = 13});
    expectMatchesReference({.direction = "bidirectional", .signedW = false, .seed = 17});
}

TEST(MsDynamicQuantizeLstm, SequenceLengthsShorterThanTheSequence) {
    // Rows end early; the longest row is shorter than X, whose last step is then never read
    // (nor quantized).
    expectMatchesReference({.seq = 4,
                            .batch = 3,
                            .direction = "bidirectional",
                            .lengths = {2, 4, 1},
                            .perChannel = true,
                            .seed = 19});
    expectMatchesReference({.seq = 5,
                            .batch = 3,
                            .hidden = 3,
                            .direction = "reverse",
                            .lengths = {3, 1, 2},
                            .seed = 23});
}

TEST(MsDynamicQuantizeLstm, PeepholesClipAndInputForget) {
    expectMatchesReference({.withPeepholes = true, .clip = 0.7f, .seed = 29});
    expectMatchesReference({.direction = "bidirectional", .inputForget = true, .seed = 31});
}

TEST(MsDynamicQuantizeLstm, TwoThreadsGiveTheSameBits) {
    const DqCase c{.seq = 4,
                   .batch = 3,
                   .input = 5,
                   .hidden = 4,
                   .direction = "bidirectional",
                   .perChannel = true,
                   .seed = 37};
    const DqData d = makeData(c);
    auto one = runOneNode(specFor(c, d), 1);
    auto two = runOneNode(specFor(c, d), 2);
    ASSERT_TRUE(one && two);
    for (std::size_t o = 0; o < 3; ++o)
        EXPECT_TRUE(tensorsClose(two->at(o).tensor(), one->at(o).tensor(), {0.0, 0.0}));
}

TEST(MsDynamicQuantizeLstm, InfiniteAndNaNInputsRunWithoutUndefinedBehaviour) {
    // An X holding -inf and +inf gives an infinite range (zero point NaN, taken as 0) and a NaN
    // becomes 0 when quantized: the run completes (UBSan watches the float-to-integer casts).
    const DqCase c;
    const DqData d = makeData(c);
    OneNodeSpec spec = specFor(c, d);
    std::vector<float> x = d.x;
    x[1] = std::numeric_limits<float>::infinity();
    x[2] = -std::numeric_limits<float>::infinity();  // with +inf: -low / scale = inf / inf
    x[4] = std::numeric_limits<float>::quiet_NaN();
    spec.inputs[0] = makeTensor<float>({c.seq, c.batch, c.input}, x);
    auto r = runOneNode(spec);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->at(0).tensor().shape(), (Shape{c.seq, 1, c.batch, c.hidden}));
}

TEST(MsDynamicQuantizeLstm, BatchFirstLayoutIsTheTransposedRun) {
    // layout 1 (batch first), as the standard LSTM's attribute: X [batch, seq, input], states
    // [batch, D, H], Y [batch, seq, D, H]; the same values as the layout-0 run, moved.
    const DqCase c{
        .seq = 3, .batch = 2, .input = 3, .hidden = 2, .direction = "bidirectional", .seed = 41};
    const DqData d = makeData(c);
    const OneNodeSpec plain = specFor(c, d);
    auto expected = runOneNode(plain);
    ASSERT_TRUE(expected) << expected.error().message;
    const std::int64_t D = 2, B = c.batch, S = c.seq, H = c.hidden, I = c.input;
    auto swapped = [](const Tensor& t, std::int64_t a, std::int64_t b, std::int64_t rest) {
        Shape shape = t.shape();
        std::swap(shape[0], shape[1]);
        Tensor out(DataType::Float, shape);
        for (std::int64_t i = 0; i < a; ++i)
            for (std::int64_t j = 0; j < b; ++j)
                for (std::int64_t k = 0; k < rest; ++k)
                    out.data<float>()[(j * a + i) * rest + k] =
                        t.data<float>()[(i * b + j) * rest + k];
        return out;
    };
    OneNodeSpec batchFirst = plain;
    batchFirst.inputs[0] = swapped(plain.inputs[0].tensor(), S, B, I);
    batchFirst.inputs[5] = swapped(plain.inputs[5].tensor(), D, B, H);
    batchFirst.inputs[6] = swapped(plain.inputs[6].tensor(), D, B, H);
    batchFirst.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "hidden_size", c.hidden);
        setAttr(n, "direction", c.direction);
        setAttr(n, "layout", std::int64_t{1});
    };
    auto result = runOneNode(batchFirst);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(),
                             swapped(expected->at(0).tensor(), S * D, B, H).reshaped({B, S, D, H}),
                             {0.0, 0.0}));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), swapped(expected->at(1).tensor(), D, B, H),
                             {0.0, 0.0}));
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), swapped(expected->at(2).tensor(), D, B, H),
                             {0.0, 0.0}));
}

::testing::AssertionResult failsNaming(const OneNodeSpec& spec,
                                       std::initializer_list<const char*> words) {
    return ms::errorMentions(runOneNode(spec), words);
}

TEST(MsDynamicQuantizeLstm, HostileAttributesAndInputsAreErrors) {
    const DqCase c;
    const DqData d = makeData(c);
    const OneNodeSpec good = specFor(c, d);
    ASSERT_TRUE(runOneNode(good));

    auto withHidden = [&](std::int64_t hidden) {
        OneNodeSpec s = good;
        s.attributes = [hidden](onnx::NodeProto& n) { setAttr(n, "hidden_size", hidden); };
        return s;
    };
    EXPECT_TRUE(failsNaming(withHidden(0), {"under_test", "hidden_size"}));
    EXPECT_TRUE(failsNaming(withHidden(-4), {"under_test", "hidden_size"}));
    EXPECT_TRUE(failsNaming(withHidden(std::int64_t{1} << 62), {"under_test", "hidden_size"}));
    EXPECT_TRUE(failsNaming(withHidden(3), {"under_test", "input W", "[1x3x12]"}));
    OneNodeSpec noHidden = good;
    noHidden.attributes = {};
    EXPECT_TRUE(failsNaming(noHidden, {"under_test", "hidden_size"}));

    auto withInput = [&](std::size_t index, Value v) {
        OneNodeSpec s = good;
        s.inputs[index] = std::move(v);
        return s;
    };
    EXPECT_TRUE(failsNaming(withInput(8, makeTensor<float>({1, 5}, {1, 1, 1, 1, 1})),
                            {"under_test", "W_scale"}));
    EXPECT_TRUE(failsNaming(withInput(10, makeTensor<float>({2}, {1, 1})), {"R_scale"}));
    EXPECT_TRUE(failsNaming(withInput(10, makeTensor<float>({}, {1})), {"R_scale"}));
    EXPECT_TRUE(failsNaming(withInput(8, makeTensor<double>({1}, {1.0})), {"W_scale", "float"}));
    EXPECT_TRUE(failsNaming(withInput(9, makeTensor<std::uint8_t>({1}, {0})),
                            {"under_test", "W_zero_point", "int8"}));
    EXPECT_TRUE(failsNaming(withInput(11, makeTensor<std::int32_t>({1}, {0})), {"R_zero_point"}));
    EXPECT_TRUE(
        failsNaming(withInput(11, makeTensor<std::int8_t>({1, 3}, {0, 0, 0})), {"R_zero_point"}));
    EXPECT_TRUE(failsNaming(withInput(1, makeTensor<float>({1, 3, 8}, std::vector<float>(24))),
                            {"input W", "int8 or uint8"}));
    EXPECT_TRUE(
        failsNaming(withInput(2, makeTensor<std::int8_t>({1, 8, 2}, std::vector<std::int8_t>(16))),
                    {"input R", "[1x2x8]"}));
    EXPECT_TRUE(failsNaming(withInput(0, makeTensor<float>({3, 2}, std::vector<float>(6))), {"X"}));
    EXPECT_TRUE(
        failsNaming(withInput(4, makeTensor<std::int32_t>({2}, {1, 9})), {"sequence_lens"}));
    EXPECT_TRUE(failsNaming(withInput(3, makeTensor<float>({1, 4}, {0, 0, 0, 0})), {"B"}));
    // An input size whose int32 sums could overflow is refused, not wrapped.
    const std::int64_t deep = 33026;
    OneNodeSpec tooDeep = good;
    tooDeep.inputs[0] = makeTensor<float>({1, 1, deep}, std::vector<float>(deep, 0.5f));
    tooDeep.inputs[1] =
        makeTensor<std::int8_t>({1, deep, 8}, std::vector<std::int8_t>(deep * 8, 1));
    tooDeep.inputs[4] = Value();
    tooDeep.inputs[5] = tooDeep.inputs[6] = Value();
    EXPECT_TRUE(failsNaming(tooDeep, {"under_test", "input_size", "33025"}));
    OneNodeSpec missing = good;
    missing.inputs.resize(9);
    EXPECT_TRUE(failsNaming(missing, {"under_test"}));
}

}  // namespace
}  // namespace onnxlens::testing
