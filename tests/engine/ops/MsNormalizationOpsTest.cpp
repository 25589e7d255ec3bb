// The com.microsoft normalizations (SkipLayerNormalization, SkipSimplifiedLayerNormalization,
// EmbedLayerNormalization, GroupNorm) and ONNX Runtime's default-domain LayerNormalization
// (opsets 1 to 16) and SimplifiedLayerNormalization, against double-precision references written
// here: every optional input and output, skip broadcasting, float16 and double tensors, the
// threaded path, and malformed nodes and inputs (errors naming the node).
#include <cmath>

#include "MsOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

using namespace ms;

// Layer normalization of each row of `h` values in double: y, mean and inverse standard
// deviation per row (the RMS form when `rms`: mean 0, no beta).
struct RowNorm {
    std::vector<double> y, mean, invStd;
};
RowNorm normalizeRows(const std::vector<double>& s, std::size_t h, const std::vector<double>& gamma,
                      const std::vector<double>& beta, double epsilon, bool rms) {
    RowNorm r;
    r.y.resize(s.size());
    for (std::size_t row = 0; row * h < s.size(); ++row) {
        const double* v = s.data() + row * h;
        double mean = 0, squares = 0;
        if (!rms) {
            for (std::size_t i = 0; i < h; ++i) mean += v[i];
            mean /= static_cast<double>(h);
        }
        for (std::size_t i = 0; i < h; ++i) squares += (v[i] - mean) * (v[i] - mean);
        const double inv = 1.0 / std::sqrt(squares / static_cast<double>(h) + epsilon);
        for (std::size_t i = 0; i < h; ++i)
            r.y[row * h + i] = (v[i] - mean) * inv * gamma[i] + (beta.empty() ? 0.0 : beta[i]);
        r.mean.push_back(mean);
        r.invStd.push_back(inv);
    }
    return r;
}

// x + skip (skip's rows repeating) + bias.
std::vector<double> skipSum(const Tensor& x, const Tensor& skip, const Tensor* bias) {
    auto xs = doublesOf(x), ss = doublesOf(skip);
    const auto h = static_cast<std::size_t>(x.shape().back());
    std::vector<double> b = bias ? doublesOf(*bias) : std::vector<double>(h, 0.0);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] += ss[i % ss.size()] + b[i % h];
    return xs;
}

Shape withLastOne(Shape s) {
    s.back() = 1;
    return s;
}

void expectStatistics(const std::vector<Value>& out, const Shape& x, const RowNorm& ref) {
    EXPECT_TRUE(
        tensorsClose(out.at(1).tensor(), tensorOf(DataType::Float, withLastOne(x), ref.mean)));
    EXPECT_TRUE(
        tensorsClose(out.at(2).tensor(), tensorOf(DataType::Float, withLastOne(x), ref.invStd)));
}

// ---- SkipLayerNormalization ------------------------------------------------------------------

TEST(MsNormalizationOps, SkipLayerNormalizationEveryInputAndOutput) {
    const Shape shape{2, 3, 8};
    Tensor x = sample(shape, 1), skip = sample(shape, 2), gamma = sample({8}, 3),
           beta = sample({8}, 4), bias = sample({8}, 5);
    OneNodeSpec spec = msSpec("SkipLayerNormalization",
                              {Value(x), Value(skip), Value(gamma), Value(beta), Value(bias)}, 4);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const auto sum = skipSum(x, skip, &bias);
    const RowNorm ref = normalizeRows(sum, 8, doublesOf(gamma), doublesOf(beta), 1e-5, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
    expectStatistics(*out, shape, ref);
    EXPECT_TRUE(tensorsClose(out->at(3).tensor(), tensorOf(DataType::Float, shape, sum)));
}

TEST(MsNormalizationOps, SkipLayerNormalizationSkipSharedOverTheBatch) {
    // skip [sequence, hidden] and [1, sequence, hidden] repeat over input's batch; no beta, no
    // bias, the default epsilon (1e-12).
    const Shape shape{3, 2, 4};
    Tensor x = sample(shape, 6), gamma = sample({4}, 7);
    for (const Shape& skipShape : {Shape{2, 4}, Shape{1, 2, 4}}) {
        Tensor skip = sample(skipShape, 8);
        OneNodeSpec spec = msSpec("SkipLayerNormalization", {Value(x), Value(skip), Value(gamma)});
        const RowNorm ref =
            normalizeRows(skipSum(x, skip, nullptr), 4, doublesOf(gamma), {}, 1e-12, false);
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), tensorOf(DataType::Float, shape, ref.y)))
            << engine::shapeToString(skipShape);
    }
}

TEST(MsNormalizationOps, SkipLayerNormalizationTwoDimensionalTokensAndChosenOutputs) {
    // [tokens, hidden]; only output and input_skip_bias_sum named.
    const Shape shape{5, 6};
    Tensor x = sample(shape, 9), skip = sample(shape, 10), gamma = sample({6}, 11),
           beta = sample({6}, 12);
    OneNodeSpec spec =
        msSpec("SkipLayerNormalization", {Value(x), Value(skip), Value(gamma), Value(beta)}, 4);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-3f); };
    auto out = runWithOutputs(spec, {true, false, false, true});
    ASSERT_TRUE(out) << out.error().message;
    const auto sum = skipSum(x, skip, nullptr);
    const RowNorm ref = normalizeRows(sum, 6, doublesOf(gamma), doublesOf(beta), 1e-3, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
    EXPECT_TRUE(out->at(1).isNone());
    EXPECT_TRUE(tensorsClose(out->at(3).tensor(), tensorOf(DataType::Float, shape, sum)));
}

TEST(MsNormalizationOps, SkipLayerNormalizationFloat16AndDouble) {
    const Shape shape{2, 2, 8};
    for (DataType type : {DataType::Float16, DataType::Double}) {
        Tensor x = sample(shape, 13, type), skip = sample({2, 8}, 14, type),
               gamma = sample({8}, 15, type), beta = sample({8}, 16, type),
               bias = sample({8}, 17, type);
        OneNodeSpec spec =
            msSpec("SkipLayerNormalization",
                   {Value(x), Value(skip), Value(gamma), Value(beta), Value(bias)}, 4);
        spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
        auto out = runOneNode(spec);
        ASSERT_TRUE(out) << out.error().message;
        const auto sum = skipSum(x, skip, &bias);
        const RowNorm ref = normalizeRows(sum, 8, doublesOf(gamma), doublesOf(beta), 1e-5, false);
        const engine::Tolerance tolerance = type == DataType::Float16
                                                ? engine::Tolerance{1e-2, 1e-2}
                                                : engine::Tolerance{1e-9, 1e-9};
        EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(type, shape, ref.y), tolerance));
        EXPECT_TRUE(tensorsClose(out->at(3).tensor(), tensorOf(type, shape, sum), tolerance));
        // The statistics are float whatever the input type.
        expectStatistics(*out, shape, ref);
    }
}

TEST(MsNormalizationOps, SkipLayerNormalizationThreadedRowsAgreeWithTheReference) {
    const Shape shape{4, 32, 96};
    Tensor x = sample(shape, 18), skip = sample({32, 96}, 19), gamma = sample({96}, 20),
           beta = sample({96}, 21);
    OneNodeSpec spec =
        msSpec("SkipLayerNormalization", {Value(x), Value(skip), Value(gamma), Value(beta)});
    auto out = runOneNode(spec, 4);
    ASSERT_TRUE(out) << out.error().message;
    const RowNorm ref = normalizeRows(skipSum(x, skip, nullptr), 96, doublesOf(gamma),
                                      doublesOf(beta), 1e-12, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
}

TEST(MsNormalizationOps, SkipSimplifiedLayerNormalizationBiasAndOutputs) {
    // The RMS form; bias is input 3; mean is written as 0 (as ONNX Runtime does).
    const Shape shape{2, 3, 8};
    Tensor x = sample(shape, 22), skip = sample({3, 8}, 23), gamma = sample({8}, 24),
           bias = sample({8}, 25);
    OneNodeSpec spec = msSpec("SkipSimplifiedLayerNormalization",
                              {Value(x), Value(skip), Value(gamma), Value(bias)}, 4);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const auto sum = skipSum(x, skip, &bias);
    const RowNorm ref = normalizeRows(sum, 8, doublesOf(gamma), {}, 1e-5, true);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
    expectStatistics(*out, shape, ref);
    EXPECT_TRUE(tensorsClose(out->at(3).tensor(), tensorOf(DataType::Float, shape, sum)));

    // Without bias, [tokens, hidden].
    Tensor x2 = sample({4, 8}, 26), skip2 = sample({4, 8}, 27);
    OneNodeSpec plain =
        msSpec("SkipSimplifiedLayerNormalization", {Value(x2), Value(skip2), Value(gamma)});
    const RowNorm ref2 =
        normalizeRows(skipSum(x2, skip2, nullptr), 8, doublesOf(gamma), {}, 1e-12, true);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(plain), tensorOf(DataType::Float, {4, 8}, ref2.y)));
}

TEST(MsNormalizationOps, SkipLayerNormalizationRefusesMalformedInputs) {
    Tensor x = sample({2, 3, 8}, 28), gamma = sample({8}, 29);
    auto spec = [&](Tensor input, Tensor skip, Tensor g) {
        return msSpec("SkipLayerNormalization", {Value(input), Value(skip), Value(g)});
    };
    EXPECT_TRUE(
        failsWith(spec(x, sample({2, 3, 8}, 1), sample({7}, 1)), "gamma must have shape [8]"));
    EXPECT_TRUE(failsWith(spec(x, sample({2, 8}, 1), gamma), "skip of shape [2x8] does not fit"));
    // ONNX Runtime tiles a skip of another batch size; here it is an error.
    EXPECT_TRUE(failsWith(spec(sample({4, 3, 8}, 1), sample({2, 3, 8}, 1), gamma), "does not fit"));
    EXPECT_TRUE(failsWith(spec(sample({4, 8}, 1), sample({1, 8}, 1), gamma), "does not fit"));
    // A rank-0 skip beside a 3-D input (found by the template sweep of HostileAttributesTest:
    // its last dim was read from an empty shape, a segmentation fault).
    EXPECT_TRUE(failsWith(spec(x, Tensor::scalar(1.0f), gamma), "skip of shape [] does not fit"));
    EXPECT_TRUE(failsWith(spec(sample({1, 2, 3, 8}, 1), sample({1, 2, 3, 8}, 1), gamma),
                          "input must be 3-D"));
    EXPECT_TRUE(failsWith(spec(x, sample({2, 3, 8}, 1, DataType::Double), gamma),
                          "skip must have input's type"));
    EXPECT_TRUE(failsWith(spec(makeTensor<std::int32_t>({1, 2}, {1, 2}),
                               makeTensor<std::int32_t>({1, 2}, {1, 2}), sample({2}, 1)),
                          "floating-point"));

    OneNodeSpec badBeta = spec(x, sample({2, 3, 8}, 1), gamma);
    badBeta.inputs.push_back(Value(sample({2, 4}, 1)));
    EXPECT_TRUE(failsWith(badBeta, "beta must have shape [8]"));
    OneNodeSpec badBias = spec(x, sample({2, 3, 8}, 1), gamma);
    badBias.inputs.push_back(Value());
    badBias.inputs.push_back(Value(sample({9}, 1)));
    EXPECT_TRUE(failsWith(badBias, "bias must have shape [8]"));

    OneNodeSpec noGamma = msSpec("SkipLayerNormalization", {Value(x), Value(sample({2, 3, 8}, 1))});
    EXPECT_TRUE(failsWith(noGamma, "has 2 inputs, the operator takes 3 to 5"));

    OneNodeSpec negative = spec(x, sample({2, 3, 8}, 1), gamma);
    negative.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", -1.0f); };
    EXPECT_TRUE(failsWith(negative, "epsilon must be >= 0"));
}

// ---- EmbedLayerNormalization -----------------------------------------------------------------

struct EmbedCase {
    Tensor ids = makeTensor<std::int32_t>({2, 3}, {1, 2, 3, 0, 4, 2});
    Tensor segmentIds = makeTensor<std::int32_t>({2, 3}, {0, 1, 1, 0, 0, 1});
    Tensor word = sample({5, 8}, 30), position = sample({4, 8}, 31), segment = sample({2, 8}, 32);
    Tensor gamma = sample({8}, 33), beta = sample({8}, 34);

    // The embedding sums, positions from `positions` ([1 or batch] x sequence) or 0, 1, 2, ...
    // segmentRowZero: segment_embedding's row 0 for every token (a table without ids).
    std::vector<double> sums(bool withSegment, const std::vector<int>& positions = {},
                             bool segmentRowZero = false) const {
        const auto w = doublesOf(word), p = doublesOf(position), s = doublesOf(segment);
        const auto id = ids.span<std::int32_t>(), seg = segmentIds.span<std::int32_t>();
        std::vector<double> e;
        for (std::size_t t = 0; t < 6; ++t) {
            std::size_t pos = t % 3;
            if (!positions.empty()) pos = static_cast<std::size_t>(positions[t % positions.size()]);
            for (std::size_t i = 0; i < 8; ++i) {
                double v = w[static_cast<std::size_t>(id[t]) * 8 + i] + p[pos * 8 + i];
                if (withSegment) v += s[static_cast<std::size_t>(seg[t]) * 8 + i];
                if (segmentRowZero) v += s[i];
                e.push_back(v);
            }
        }
        return e;
    }
    std::vector<Value> inputs(bool withSegment) const {
        return {Value(ids),      withSegment ? Value(segmentIds) : Value(), Value(word),
                Value(position), withSegment ? Value(segment) : Value(),    Value(gamma),
                Value(beta)};
    }
};

TEST(MsNormalizationOps, EmbedLayerNormalizationWithSegmentsAndMask) {
    EmbedCase c;
    std::vector<Value> inputs = c.inputs(true);
    // mask_index counts the entries equal to 1 (as ONNX Runtime): {1, 2, -1} -> 1, {0, 1, 1} -> 2.
    inputs.push_back(Value(makeTensor<std::int32_t>({2, 3}, {1, 2, -1, 0, 1, 1})));
    OneNodeSpec spec = msSpec("EmbedLayerNormalization", inputs, 3);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const auto sums = c.sums(true);
    const RowNorm ref = normalizeRows(sums, 8, doublesOf(c.gamma), doublesOf(c.beta), 1e-5, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, {2, 3, 8}, ref.y)));
    EXPECT_EQ(out->at(1).tensor().dtype(), DataType::Int32);
    EXPECT_TRUE(tensorsClose(out->at(1).tensor(), makeTensor<std::int32_t>({2}, {1, 2})));
    EXPECT_TRUE(tensorsClose(out->at(2).tensor(), tensorOf(DataType::Float, {2, 3, 8}, sums)));
}

TEST(MsNormalizationOps, EmbedLayerNormalizationWithoutSegmentsOrMask) {
    // DistilBERT's form: no segment ids nor table; without a mask mask_index is 0.
    EmbedCase c;
    OneNodeSpec spec = msSpec("EmbedLayerNormalization", c.inputs(false), 2);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "epsilon", 1e-5f);
        setAttr(n, "mask_index_type", std::int64_t{0});
    };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const RowNorm ref =
        normalizeRows(c.sums(false), 8, doublesOf(c.gamma), doublesOf(c.beta), 1e-5, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, {2, 3, 8}, ref.y)));
    EXPECT_TRUE(tensorsClose(out->at(1).tensor(), makeTensor<std::int32_t>({2}, {0, 0})));

    // A segment table without segment ids adds its row 0 to every token (as ONNX Runtime).
    std::vector<Value> tableOnly = c.inputs(false);
    tableOnly[4] = Value(c.segment);
    OneNodeSpec rowZero = msSpec("EmbedLayerNormalization", tableOnly, 3);
    auto outZero = runOneNode(rowZero);
    ASSERT_TRUE(outZero) << outZero.error().message;
    EXPECT_TRUE(tensorsClose(outZero->at(2).tensor(),
                             tensorOf(DataType::Float, {2, 3, 8}, c.sums(false, {}, true))));
}

TEST(MsNormalizationOps, EmbedLayerNormalizationPositionIds) {
    EmbedCase c;
    for (const auto& [shape, positions] :
         {std::pair{Shape{1, 3}, std::vector<int>{2, 0, 1}},
          std::pair{Shape{2, 3}, std::vector<int>{2, 0, 1, 3, 3, 0}}}) {
        std::vector<Value> inputs = c.inputs(true);
        inputs.push_back(Value());
        inputs.push_back(Value(makeTensor<std::int32_t>(
            shape, std::vector<std::int32_t>(positions.begin(), positions.end()))));
        OneNodeSpec spec = msSpec("EmbedLayerNormalization", inputs, 3);
        auto out = runOneNode(spec);
        ASSERT_TRUE(out) << out.error().message;
        const auto sums = c.sums(true, positions);
        const RowNorm ref =
            normalizeRows(sums, 8, doublesOf(c.gamma), doublesOf(c.beta), 1e-12, false);
        EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, {2, 3, 8}, ref.y)));
        EXPECT_TRUE(tensorsClose(out->at(2).tensor(), tensorOf(DataType::Float, {2, 3, 8}, sums)));
    }
}

TEST(MsNormalizationOps, EmbedLayerNormalizationFloat16Tables) {
    EmbedCase c;
    for (Tensor* t : {&c.word, &c.position, &c.segment, &c.gamma, &c.beta})
        *t = t->castTo(DataType::Float16);
    OneNodeSpec spec = msSpec("EmbedLayerNormalization", c.inputs(true), 3);
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const auto sums = c.sums(true);
    const RowNorm ref = normalizeRows(sums, 8, doublesOf(c.gamma), doublesOf(c.beta), 1e-12, false);
    const engine::Tolerance tolerance{1e-2, 1e-2};
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float16, {2, 3, 8}, ref.y),
                             tolerance));
    EXPECT_TRUE(
        tensorsClose(out->at(2).tensor(), tensorOf(DataType::Float16, {2, 3, 8}, sums), tolerance));
}

TEST(MsNormalizationOps, EmbedLayerNormalizationRefusesBadIdsAndShapes) {
    auto with = [](auto change) {
        EmbedCase c;
        std::vector<Value> inputs = c.inputs(true);
        change(c, inputs);
        return msSpec("EmbedLayerNormalization", inputs, 2);
    };
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[0] = Value(makeTensor<std::int32_t>({2, 3}, {1, 2, 9, 0, 4, 2}));
                          }),
                          "input_ids value 9 (element 2) is outside word_embedding's 5 rows"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[0] = Value(makeTensor<std::int32_t>({2, 3}, {1, 2, 3, -1, 4, 2}));
                          }),
                          "input_ids value -1"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[1] = Value(makeTensor<std::int32_t>({2, 3}, {0, 1, 2, 0, 0, 0}));
                          }),
                          "segment_ids value 2"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in.push_back(Value());
                              in.push_back(Value(makeTensor<std::int32_t>({1, 3}, {0, 4, 1})));
                          }),
                          "position_ids value 4"));
    EXPECT_TRUE(failsWith(
        with([](EmbedCase&, std::vector<Value>& in) {
            in.push_back(Value());
            in.push_back(Value(makeTensor<std::int32_t>({3, 3}, std::vector<std::int32_t>(9, 0))));
        }),
        "position_ids must be [2, 3] or [1, 3]"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[0] = Value(makeTensor<std::int32_t>({1, 5}, {0, 0, 0, 0, 0}));
                              in[1] = Value(makeTensor<std::int32_t>({1, 5}, {0, 0, 0, 0, 0}));
                          }),
                          "sequence length 5 exceeds position_embedding's 4 rows"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) { in[4] = Value(); }),
                          "segment_ids is given without segment_embedding"));
    EXPECT_TRUE(
        failsWith(with([](EmbedCase&, std::vector<Value>& in) { in[5] = Value(sample({7}, 1)); }),
                  "gamma must have shape [8]"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[3] = Value(sample({4, 6}, 1));
                          }),
                          "position_embedding must be 2-D [rows, 8]"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[0] = Value(sample({2, 3}, 1));
                          }),
                          "input_ids must be an int32"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in[0] = Value(makeTensor<std::int32_t>({6}, {0, 0, 0, 0, 0, 0}));
                          }),
                          "input_ids must be 2-D"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) {
                              in.push_back(Value(makeTensor<std::int32_t>({2, 2}, {1, 1, 1, 1})));
                          }),
                          "mask must have input_ids' shape"));
    EXPECT_TRUE(failsWith(with([](EmbedCase&, std::vector<Value>& in) { in.pop_back(); }),
                          "has 6 inputs, the operator takes 7 to 9"));
    OneNodeSpec negative = with([](EmbedCase&, std::vector<Value>&) {});
    negative.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", -1e-5f); };
    EXPECT_TRUE(failsWith(negative, "epsilon must be >= 0"));
}

// ---- GroupNorm -------------------------------------------------------------------------------

// GroupNorm of x (NHWC or NCHW) in double.
std::vector<double> groupNormReference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       std::int64_t groups, double epsilon, bool silu,
                                       bool channelsLast) {
    const auto v = doublesOf(x), g = doublesOf(gamma), b = doublesOf(beta);
    const auto& s = x.shape();
    const std::int64_t n = s[0], c = channelsLast ? s[3] : s[1];
    const std::int64_t pixels = channelsLast ? s[1] * s[2] : s[2] * s[3];
    auto at = [&](std::int64_t sample, std::int64_t ch, std::int64_t px) {
        return static_cast<std::size_t>(channelsLast ? (sample * pixels + px) * c + ch
                                                     : (sample * c + ch) * pixels + px);
    };
    std::vector<double> y(v.size());
    const std::int64_t perGroup = c / groups;
    for (std::int64_t sample = 0; sample < n; ++sample)
        for (std::int64_t group = 0; group < groups; ++group) {
            double mean = 0, var = 0;
            const auto count = static_cast<double>(perGroup * pixels);
            for (std::int64_t ch = group * perGroup; ch < (group + 1) * perGroup; ++ch)
                for (std::int64_t px = 0; px < pixels; ++px) mean += v[at(sample, ch, px)] / count;
            for (std::int64_t ch = group * perGroup; ch < (group + 1) * perGroup; ++ch)
                for (std::int64_t px = 0; px < pixels; ++px) {
                    const double d = v[at(sample, ch, px)] - mean;
                    var += d * d / count;
                }
            for (std::int64_t ch = group * perGroup; ch < (group + 1) * perGroup; ++ch)
                for (std::int64_t px = 0; px < pixels; ++px) {
                    double r = (v[at(sample, ch, px)] - mean) / std::sqrt(var + epsilon) *
                                   g[static_cast<std::size_t>(ch)] +
                               b[static_cast<std::size_t>(ch)];
                    if (silu) r = r / (1.0 + std::exp(-r));
                    y[at(sample, ch, px)] = r;
                }
        }
    return y;
}

OneNodeSpec groupNormSpec(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          std::int64_t groups, std::int64_t activation, float epsilon,
                          std::int64_t channelsLast = 1) {
    OneNodeSpec spec = msSpec("GroupNorm", {Value(x), Value(gamma), Value(beta)});
    spec.attributes = [=](onnx::NodeProto& n) {
        setAttr(n, "groups", groups);
        setAttr(n, "activation", activation);
        setAttr(n, "epsilon", epsilon);
        setAttr(n, "channels_last", channelsLast);
    };
    return spec;
}

TEST(MsNormalizationOps, GroupNormChannelsLastWithAndWithoutSiLU) {
    Tensor x = sample({2, 2, 3, 6}, 40, DataType::Float, 3.0f), gamma = sample({6}, 41),
           beta = sample({6}, 42);
    for (std::int64_t activation : {0, 1}) {
        const auto ref = groupNormReference(x, gamma, beta, 3, 1e-5, activation == 1, true);
        EXPECT_TRUE(
            tensorsClose(runOneNodeTensor(groupNormSpec(x, gamma, beta, 3, activation, 1e-5f)),
                         tensorOf(DataType::Float, x.shape(), ref)))
            << "activation " << activation;
    }
}

TEST(MsNormalizationOps, GroupNormChannelsFirst) {
    Tensor x = sample({2, 4, 3, 2}, 43), gamma = sample({4}, 44), beta = sample({4}, 45);
    const auto ref = groupNormReference(x, gamma, beta, 2, 1e-3, true, false);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(groupNormSpec(x, gamma, beta, 2, 1, 1e-3f, 0)),
                             tensorOf(DataType::Float, x.shape(), ref)));
}

TEST(MsNormalizationOps, GroupNormFloat16InputWithFloatParameters) {
    // As ONNX Runtime's kernel takes them: float16 X, float gamma and beta.
    Tensor x = sample({1, 4, 4, 8}, 46, DataType::Float16), gamma = sample({8}, 47),
           beta = sample({8}, 48);
    const auto ref = groupNormReference(x, gamma, beta, 4, 1e-5, true, true);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(groupNormSpec(x, gamma, beta, 4, 1, 1e-5f)),
                             tensorOf(DataType::Float16, x.shape(), ref), {1e-2, 1e-2}));
}

TEST(MsNormalizationOps, GroupNormThreaded) {
    Tensor x = sample({2, 16, 16, 32}, 49), gamma = sample({32}, 50), beta = sample({32}, 51);
    auto out = runOneNode(groupNormSpec(x, gamma, beta, 8, 1, 1e-5f), 4);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(),
                             tensorOf(DataType::Float, x.shape(),
                                      groupNormReference(x, gamma, beta, 8, 1e-5, true, true))));
}

TEST(MsNormalizationOps, GroupNormRefusesMalformedNodes) {
    Tensor x = sample({1, 2, 2, 6}, 52), gamma = sample({6}, 53), beta = sample({6}, 54);
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, beta, 0, 0, 1e-5f), "groups must be positive"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, beta, -2, 0, 1e-5f), "groups must be positive"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, beta, 4, 0, 1e-5f),
                          "6 channels do not split into 4 groups"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, beta, 2, 2, 1e-5f),
                          "activation must be 0 (none) or 1 (SiLU)"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, beta, 2, 0, -1e-5f), "epsilon must be >= 0"));
    EXPECT_TRUE(
        failsWith(groupNormSpec(sample({2, 3, 6}, 1), gamma, beta, 2, 0, 1e-5f), "X must be 4-D"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, sample({3}, 1), beta, 3, 0, 1e-5f),
                          "gamma must have shape [6]"));
    EXPECT_TRUE(failsWith(groupNormSpec(x, gamma, sample({2, 3}, 1), 3, 0, 1e-5f),
                          "beta must have shape [6]"));
    OneNodeSpec noActivation = msSpec("GroupNorm", {Value(x), Value(gamma), Value(beta)});
    noActivation.attributes = [](onnx::NodeProto& n) { setAttr(n, "groups", std::int64_t{2}); };
    EXPECT_TRUE(failsWith(noActivation, "activation"));
}

// ---- LayerNormalization and SimplifiedLayerNormalization of the default domain ---------------

TEST(MsNormalizationOps, LayerNormalizationBeforeOpset17IsOnnxRuntimesContribOperator) {
    const Shape shape{2, 3, 4};
    Tensor x = sample(shape, 60), gamma = sample({4}, 61), beta = sample({4}, 62);
    for (int opset : {1, 13, 16}) {
        OneNodeSpec spec =
            nodeSpec("LayerNormalization", opset, {Value(x), Value(gamma), Value(beta)}, 3);
        spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
        auto out = runOneNode(spec);
        ASSERT_TRUE(out) << "opset " << opset << ": " << out.error().message;
        const RowNorm ref =
            normalizeRows(doublesOf(x), 4, doublesOf(gamma), doublesOf(beta), 1e-5, false);
        EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
        expectStatistics(*out, shape, ref);
    }
    // axis 1: each sample's [3, 4] values, scale and bias [3, 4].
    Tensor gamma2 = sample({3, 4}, 63), beta2 = sample({3, 4}, 64);
    OneNodeSpec spec =
        nodeSpec("LayerNormalization", 13, {Value(x), Value(gamma2), Value(beta2)}, 3);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "epsilon", 1e-5f);
        setAttr(n, "axis", std::int64_t{1});
    };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    const RowNorm ref =
        normalizeRows(doublesOf(x), 12, doublesOf(gamma2), doublesOf(beta2), 1e-5, false);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
    EXPECT_TRUE(
        tensorsClose(out->at(2).tensor(), tensorOf(DataType::Float, {2, 1, 1}, ref.invStd)));
}

TEST(MsNormalizationOps, SimplifiedLayerNormalizationInTheDefaultDomain) {
    const Shape shape{2, 3, 4};
    Tensor x = sample(shape, 65), gamma = sample({4}, 66);
    for (int opset : {1, 17, 23}) {
        OneNodeSpec spec =
            nodeSpec("SimplifiedLayerNormalization", opset, {Value(x), Value(gamma)}, 2);
        spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "epsilon", 1e-5f); };
        auto out = runOneNode(spec);
        ASSERT_TRUE(out) << "opset " << opset << ": " << out.error().message;
        const RowNorm ref = normalizeRows(doublesOf(x), 4, doublesOf(gamma), {}, 1e-5, true);
        EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
        EXPECT_TRUE(tensorsClose(out->at(1).tensor(),
                                 tensorOf(DataType::Float, withLastOne(shape), ref.invStd)));
    }
    // axis 1 with a [4] scale broadcast over the normalized [3, 4]; inv_std_var in double
    // (stash_type 11); float16 X keeps a float inv_std_var by default.
    OneNodeSpec spec = nodeSpec("SimplifiedLayerNormalization", 13, {Value(x), Value(gamma)}, 2);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "axis", std::int64_t{1});
        setAttr(n, "stash_type", std::int64_t{11});
    };
    auto out = runOneNode(spec);
    ASSERT_TRUE(out) << out.error().message;
    std::vector<double> g12;
    for (int i = 0; i < 12; ++i) g12.push_back(doublesOf(gamma)[static_cast<std::size_t>(i % 4)]);
    const RowNorm ref = normalizeRows(doublesOf(x), 12, g12, {}, 1e-5, true);
    EXPECT_TRUE(tensorsClose(out->at(0).tensor(), tensorOf(DataType::Float, shape, ref.y)));
    EXPECT_TRUE(
        tensorsClose(out->at(1).tensor(), tensorOf(DataType::Double, {2, 1, 1}, ref.invStd)));

    Tensor half = x.castTo(DataType::Float16);
    OneNodeSpec halfSpec = nodeSpec("SimplifiedLayerNormalization", 13,
                                    {Value(half), Value(gamma.castTo(DataType::Float16))}, 2);
    auto halfOut = runOneNode(halfSpec);
    ASSERT_TRUE(halfOut) << halfOut.error().message;
    const RowNorm halfRef = normalizeRows(
        doublesOf(half), 4, doublesOf(gamma.castTo(DataType::Float16)), {}, 1e-5, true);
    EXPECT_TRUE(tensorsClose(halfOut->at(0).tensor(), tensorOf(DataType::Float16, shape, halfRef.y),
                             {1e-2, 1e-2}));
    EXPECT_EQ(halfOut->at(1).tensor().dtype(), DataType::Float);
}

TEST(MsNormalizationOps, SimplifiedLayerNormalizationRefusesABadScaleAndStash) {
    Tensor x = sample({2, 4}, 67);
    EXPECT_TRUE(
        failsWith(nodeSpec("SimplifiedLayerNormalization", 13, {Value(x), Value(sample({3}, 1))}),
                  "SimplifiedLayerNormalization scale"));
    OneNodeSpec stash =
        nodeSpec("SimplifiedLayerNormalization", 13, {Value(x), Value(sample({4}, 1))});
    stash.attributes = [](onnx::NodeProto& n) { setAttr(n, "stash_type", std::int64_t{7}); };
    EXPECT_TRUE(failsWith(stash, "unsupported stash_type 7"));
}

}  // namespace
}  // namespace onnxlens::testing
