// com.microsoft MultiHeadAttention and Attention against double-precision references written
// here from ONNX Runtime's semantics: additive padding masks (mask_filter_value) in every form,
// unidirectional masking, attention bias, past/present, cross-attention caches, the fused QKV
// projection; and their refusals of hostile inputs.
#include <cmath>
#include <limits>

#include "MsAttentionTestSupport.h"

namespace onnxlens::testing {
namespace {

using namespace msattention;

const engine::Tolerance kTolerance{1e-4, 1e-5};

// The additive padding mask of a mask input as ONNX Runtime reads it, per (b, s, j).
std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> paddingMask(
    const Shape& shape, const std::vector<std::int32_t>& m, std::int64_t batch, std::int64_t seq,
    std::int64_t total, std::int64_t past, double filter) {
    return [=](std::int64_t b, std::int64_t, std::int64_t s, std::int64_t j) -> double {
        bool keep = true;
        if (shape.size() == 1) {
            keep = j < m[static_cast<std::size_t>(b)];
            if (shape[0] == 2 * batch) keep = keep && j >= m[static_cast<std::size_t>(batch + b)];
        } else if (shape.size() == 2) {
            keep = m[static_cast<std::size_t>(b * total + j)] > 0;
        } else if (shape.size() == 3) {
            keep = m[static_cast<std::size_t>((b * seq + s) * total + j)] > 0;
        } else {
            const std::int64_t size = shape[2];
            keep = m[static_cast<std::size_t>((b * size + past + s) * size + j)] > 0;
        }
        return keep ? 0.0 : filter;
    };
}

// ---- MultiHeadAttention ----

struct MhaCase {
    std::int64_t batch = 2, seq = 3, kvSeq = 3, heads = 2, headSize = 4, vHeadSize = 4, past = 0;
    bool bias = false, causal = false, cachedKv = false, attentionBias = false, qk = false;
    Shape maskShape;
    std::vector<std::int32_t> mask;
    float scale = 0.0f;
    // A row whose keys are all masked adds the filter to every score: in float that rounds the
    // scores (ulp of 10000 is 1e-3), so the cases with such rows use a small filter.
    float filter = -10000.0f;
};

void expectMha(const MhaCase& c) {
    const std::int64_t B = c.batch, S = c.seq, L = c.kvSeq, N = c.heads, H = c.headSize,
                       Hv = c.vHeadSize, P = c.past, T = P + L, D = N * H, Dv = N * Hv;
    const auto q = wave(B * S * D, 0.1), k = wave(B * L * D, 0.5), v = wave(B * L * Dv, 0.9),
               bias = wave(2 * D + Dv, 1.3, 0.5), pk = wave(B * N * P * H, 1.7),
               pv = wave(B * N * P * Hv, 2.1), ab = wave(B * N * S * T, 2.5);
    std::vector<Value> inputs{
        Value(floatTensor({B, S, D}, q)),
        c.cachedKv ? Value(floatTensor({B, N, L, H}, k)) : Value(floatTensor({B, L, D}, k)),
        c.cachedKv ? Value(floatTensor({B, N, L, Hv}, v)) : Value(floatTensor({B, L, Dv}, v)),
        c.bias ? Value(floatTensor({2 * D + Dv}, bias)) : Value(),
        c.mask.empty() ? Value() : Value(int32Tensor(c.maskShape, c.mask)),
        c.attentionBias ? Value(floatTensor({B, N, S, T}, ab)) : Value()};
    if (P > 0) {
        inputs.push_back(Value(floatTensor({B, N, P, H}, pk)));
        inputs.push_back(Value(floatTensor({B, N, P, Hv}, pv)));
    }
    OneNodeSpec spec = nodeSpec("MultiHeadAttention", 1, inputs, c.qk ? 4 : 3, kMsDomain);
    spec.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "num_heads", c.heads);
        if (c.causal) setAttr(n, "unidirectional", std::int64_t{1});
        if (c.scale > 0) setAttr(n, "scale", c.scale);
        if (c.filter != -10000.0f) setAttr(n, "mask_filter_value", c.filter);
    };

    ReferenceProblem p;
    p.batch = B;
    p.heads = p.kvHeads = N;
    p.queries = S;
    p.keys = T;
    p.headSize = H;
    p.vHeadSize = Hv;
    std::vector<double> qb = q;
    if (c.bias)
        for (std::size_t i = 0; i < qb.size(); ++i) qb[i] += bias[i % static_cast<std::size_t>(D)];
    p.q = toHeadMajor(qb, B, S, N, H);
    // Keys/values: past rows then the new ones (+ bias), [B, N, T, size].
    auto present = [&](const std::vector<double>& pastRows, const std::vector<double>& fresh,
                       std::int64_t size, std::int64_t biasOffset) {
        std::vector<double> all(static_cast<std::size_t>(B * N * T * size));
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < N; ++h)
                for (std::int64_t j = 0; j < T; ++j)
                    for (std::int64_t d = 0; d < size; ++d) {
                        double x = 0;
                        if (j < P)
                            x = pastRows[static_cast<std::size_t>(((b * N + h) * P + j) * size +
                                                                  d)];
                        else if (c.cachedKv)
                            x = fresh[static_cast<std::size_t>(((b * N + h) * L + j) * size + d)];
                        else
                            x = fresh[static_cast<std::size_t>(((b * L + j - P) * N + h) * size +
                                                               d)] +
                                (c.bias ? bias[static_cast<std::size_t>(biasOffset + h * size + d)]
                                        : 0.0);
                        all[static_cast<std::size_t>(((b * N + h) * T + j) * size + d)] = x;
                    }
        return all;
    };
    p.k = present(pk, k, H, D);
    p.v = present(pv, v, Hv, 2 * D);
    p.scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(H));
    if (c.causal)
        p.visible = [P](std::int64_t, std::int64_t, std::int64_t s, std::int64_t j) {
            return j <= P + s;
        };
    const auto mask =
        c.mask.empty() ? nullptr : paddingMask(c.maskShape, c.mask, B, S, T, P, c.filter);
    p.additive = [&](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t j) {
        double x = mask ? mask(b, h, s, j) : 0.0;
        if (c.attentionBias) x += ab[static_cast<std::size_t>(((b * N + h) * S + s) * T + j)];
        return x;
    };
    std::vector<double> scores;
    const auto expected = referenceAttention(p, nullptr, &scores);

    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(
        tensorsClose(result->at(0).tensor(), floatTensor({B, S, Dv}, expected), kTolerance));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), floatTensor({B, N, T, H}, p.k), kTolerance));
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), floatTensor({B, N, T, Hv}, p.v), kTolerance));
    if (c.qk) {
        // Keys hidden by unidirectional hold the lowest float.
        if (c.causal)
            for (std::int64_t r = 0; r < B * N * S; ++r)
                for (std::int64_t j = P + r % S + 1; j < T; ++j)
                    scores[static_cast<std::size_t>(r * T + j)] =
                        std::numeric_limits<float>::lowest();
        EXPECT_TRUE(
            tensorsClose(result->at(3).tensor(), floatTensor({B, N, S, T}, scores), kTolerance));
    }
}

TEST(MsMultiHeadAttention, SelfAttentionWithBias) {
    MhaCase c;
    c.bias = true;
    expectMha(c);
}

TEST(MsMultiHeadAttention, CrossAttentionWithLongerKeysAndOtherValueWidth) {
    MhaCase c;
    c.kvSeq = 5;
    c.vHeadSize = 6;
    c.bias = true;
    c.scale = 0.3f;
    expectMha(c);
}

TEST(MsMultiHeadAttention, KeyPaddingMaskForms) {
    MhaCase lengths;
    lengths.maskShape = {2};
    lengths.mask = {2, 1};
    expectMha(lengths);
    MhaCase raw;
    raw.maskShape = {2, 3};
    raw.mask = {1, 0, 1, 0, 0, 0};  // batch 1 masks every key: it still attends, evenly scored
    raw.filter = -20.0f;
    expectMha(raw);
    MhaCase perQuery;
    perQuery.maskShape = {2, 3, 3};
    perQuery.mask = {1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0};
    expectMha(perQuery);
}

TEST(MsMultiHeadAttention, PastWithUnidirectionalMaskAndScoresOutput) {
    MhaCase c;
    c.past = 2;
    c.causal = true;
    c.bias = true;
    c.maskShape = {2, 5};
    c.mask = {1, 0, 1, 1, 1, 1, 1, 0, 1, 0};
    c.attentionBias = true;
    c.qk = true;
    expectMha(c);
    MhaCase decode;
    decode.seq = decode.kvSeq = 1;
    decode.past = 4;
    decode.causal = true;
    expectMha(decode);
}

TEST(MsMultiHeadAttention, CachedKeysAndValuesInBnsh) {
    MhaCase c;
    c.cachedKv = true;
    c.kvSeq = 4;
    c.bias = true;  // added to the query only
    expectMha(c);
}

void expectRefused(const OneNodeSpec& spec, std::initializer_list<const char*> words) {
    auto result = runOneNode(spec);
    ASSERT_FALSE(result) << "expected an error";
    const std::string& message = result.error().message;
    EXPECT_NE(message.find("under_test"), std::string::npos) << message;
    for (const char* w : words) EXPECT_NE(message.find(w), std::string::npos) << message;
}

OneNodeSpec mhaSpec(std::vector<Value> inputs, std::int64_t heads) {
    OneNodeSpec spec = nodeSpec("MultiHeadAttention", 1, std::move(inputs), 1, kMsDomain);
    spec.attributes = [heads](onnx::NodeProto& n) { setAttr(n, "num_heads", heads); };
    return spec;
}

TEST(MsMultiHeadAttention, RefusesHostileInputs) {
    const Value q(floatTensor({1, 2, 8}, wave(16, 0.1))), k(floatTensor({1, 2, 8}, wave(16, 0.2)));
    expectRefused(mhaSpec({q, k, k}, 0), {"num_heads"});
    expectRefused(mhaSpec({q, k, k}, 3), {"hidden size 8", "3 heads"});
    expectRefused(mhaSpec({q}, 2), {"key and value"});
    expectRefused(mhaSpec({q, Value(floatTensor({1, 2, 2, 2, 4}, wave(32, 0.1))), Value()}, 2),
                  {"packed KV"});
    expectRefused(mhaSpec({q, Value(floatTensor({1, 2, 6}, wave(12, 0.1))), k}, 2),
                  {"key must be"});
    expectRefused(mhaSpec({q, k, k, Value(), Value(int32Tensor({1}, {5}))}, 2),
                  {"key_padding_mask[0] = 5"});
    expectRefused(mhaSpec({q, k, k, Value(), Value(int32Tensor({5}, {2, 2, 0, 0, 2}))}, 2),
                  {"key_padding_mask of shape [5]"});
    expectRefused(
        mhaSpec({q, k, k, Value(), Value(), Value(floatTensor({1, 2, 2, 3}, wave(12, 0.1)))}, 2),
        {"attention_bias must be"});
    expectRefused(mhaSpec({q, k, k, Value(floatTensor({7}, wave(7, 0.1)))}, 2),
                  {"bias must be [24]"});
}

// ---- Attention ----

struct AttentionCase {
    std::int64_t batch = 2, seq = 4, inHidden = 6, heads = 2, qHidden = 8, vHidden = 8, past = 0;
    bool causal = false, attentionBias = false, present = true, shareBuffer = false;
    std::int64_t bufferRows = 0, pastLength = 0;  // with shareBuffer
    Shape maskShape;
    std::vector<std::int32_t> mask;
    float filter = -10000.0f;
};

void expectAttention(const AttentionCase& c) {
    const std::int64_t B = c.batch, S = c.seq, Din = c.inHidden, N = c.heads, Dq = c.qHidden,
                       Dv = c.vHidden, H = Dq / N, Hv = Dv / N, width = 2 * Dq + Dv;
    const std::int64_t P = c.shareBuffer ? c.pastLength : c.past, T = P + S;
    const std::int64_t rows = c.shareBuffer ? c.bufferRows : c.past;
    const auto x = wave(B * S * Din, 0.2), w = wave(Din * width, 0.6, 0.5),
               bias = wave(width, 1.0, 0.3), past = wave(2 * B * N * rows * H, 1.4),
               ab = wave(B * N * S * T, 1.8);
    std::vector<Value> inputs{
        Value(floatTensor({B, S, Din}, x)),
        Value(floatTensor({Din, width}, w)),
        Value(floatTensor({width}, bias)),
        c.mask.empty() ? Value() : Value(int32Tensor(c.maskShape, c.mask)),
        rows > 0 || c.shareBuffer ? Value(floatTensor({2, B, N, rows, H}, past)) : Value(),
        c.attentionBias ? Value(floatTensor({B, N, S, T}, ab)) : Value()};
    if (c.shareBuffer) inputs.push_back(Value(int32Tensor({1}, {static_cast<std::int32_t>(P)})));
    OneNodeSpec spec = nodeSpec("Attention", 1, inputs, c.present ? 2 : 1, kMsDomain);
    spec.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "num_heads", c.heads);
        if (c.causal) setAttr(n, "unidirectional", std::int64_t{1});
        if (c.qHidden != c.vHidden)
            setAttr(n, "qkv_hidden_sizes",
                    std::vector<std::int64_t>{c.qHidden, c.qHidden, c.vHidden});
        if (c.shareBuffer) setAttr(n, "past_present_share_buffer", std::int64_t{1});
        if (c.filter != -10000.0f) setAttr(n, "mask_filter_value", c.filter);
    };

    // Projection in double.
    std::vector<double> qkv(static_cast<std::size_t>(B * S * width));
    for (std::int64_t r = 0; r < B * S; ++r)
        for (std::int64_t o = 0; o < width; ++o) {
            double sum = bias[static_cast<std::size_t>(o)];
            for (std::int64_t i = 0; i < Din; ++i)
                sum += x[static_cast<std::size_t>(r * Din + i)] *
                       w[static_cast<std::size_t>(i * width + o)];
            qkv[static_cast<std::size_t>(r * width + o)] = sum;
        }
    ReferenceProblem p;
    p.batch = B;
    p.heads = p.kvHeads = N;
    p.queries = S;
    p.keys = T;
    p.headSize = H;
    p.vHeadSize = Hv;
    p.q = toHeadMajor(qkv, B, S, N, H, width, 0);
    const auto newK = toHeadMajor(qkv, B, S, N, H, width, Dq);
    const auto newV = toHeadMajor(qkv, B, S, N, Hv, width, 2 * Dq);
    const std::int64_t presentRows = c.shareBuffer ? rows : T;
    std::vector<double> present(static_cast<std::size_t>(2 * B * N * presentRows * H), 0.0);
    p.k.assign(static_cast<std::size_t>(B * N * T * H), 0.0);
    p.v.assign(static_cast<std::size_t>(B * N * T * Hv), 0.0);
    for (std::int64_t kv = 0; kv < 2; ++kv)
        for (std::int64_t bh = 0; bh < B * N; ++bh)
            for (std::int64_t j = 0; j < presentRows; ++j) {
                const std::int64_t size = kv == 0 ? H : Hv;
                for (std::int64_t d = 0; d < size; ++d) {
                    double value = 0;
                    if (j >= P && j < T)
                        value =
                            (kv == 0 ? newK
                                     : newV)[static_cast<std::size_t>((bh * S + j - P) * size + d)];
                    else if (j < rows)
                        value =
                            past[static_cast<std::size_t>(((kv * B * N + bh) * rows + j) * H + d)];
                    if (rows > 0 || c.present)
                        present[static_cast<std::size_t>(((kv * B * N + bh) * presentRows + j) * H +
                                                         d)] = value;
                    if (j < T)
                        (kv == 0 ? p.k : p.v)[static_cast<std::size_t>((bh * T + j) * size + d)] =
                            value;
                }
            }
    p.scale = 1.0 / std::sqrt(static_cast<double>(H));
    if (c.causal)
        p.visible = [P](std::int64_t, std::int64_t, std::int64_t s, std::int64_t j) {
            return j <= P + s;
        };
    const auto mask =
        c.mask.empty() ? nullptr : paddingMask(c.maskShape, c.mask, B, S, T, P, c.filter);
    p.additive = [&](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t j) {
        double value = mask ? mask(b, h, s, j) : 0.0;
        if (c.attentionBias) value += ab[static_cast<std::size_t>(((b * N + h) * S + s) * T + j)];
        return value;
    };
    const auto expected = referenceAttention(p);

    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(
        tensorsClose(result->at(0).tensor(), floatTensor({B, S, Dv}, expected), kTolerance));
    if (c.present) {
        EXPECT_TRUE(tensorsClose(result->at(1).tensor(),
                                 floatTensor({2, B, N, presentRows, H}, present), kTolerance));
    }
}

TEST(MsAttention, BertStyleWithoutMaskAndWithOtherValueWidth) {
    AttentionCase c;
    c.present = false;
    expectAttention(c);
    AttentionCase v;
    v.vHidden = 12;
    v.present = false;
    expectAttention(v);
}

TEST(MsAttention, EveryMaskIndexForm) {
    AttentionCase lengths;
    lengths.maskShape = {2};
    lengths.mask = {3, 0};  // batch 1 masks every key
    lengths.filter = -20.0f;
    expectAttention(lengths);
    AttentionCase endsAndStarts;
    endsAndStarts.maskShape = {4};
    endsAndStarts.mask = {4, 3, 1, 0};
    expectAttention(endsAndStarts);
    AttentionCase raw;
    raw.maskShape = {2, 4};
    raw.mask = {1, 1, 0, 1, 1, 0, 0, 0};
    raw.filter = -50.0f;
    expectAttention(raw);
    AttentionCase perQuery;
    perQuery.maskShape = {2, 4, 4};
    perQuery.mask = {1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
                     1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1};
    expectAttention(perQuery);
    AttentionCase megatron;  // [B, 1, max, max] read at rows past + s
    megatron.past = 2;
    megatron.maskShape = {2, 1, 7, 7};
    for (int i = 0; i < 2 * 49; ++i) megatron.mask.push_back((i * 7 + 3) % 5 != 0 ? 1 : 0);
    expectAttention(megatron);
}

TEST(MsAttention, UnidirectionalWithLeftPaddingPastAndBias) {
    AttentionCase c;
    c.causal = true;
    c.maskShape = {4};
    c.mask = {4, 4, 2, 1};  // query 0 of batch 0 sees only key 0, which is padding
    c.filter = -20.0f;
    expectAttention(c);
    AttentionCase gpt2;
    gpt2.causal = true;
    gpt2.past = 3;
    gpt2.attentionBias = true;
    gpt2.maskShape = {2, 7};
    gpt2.mask = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1};
    expectAttention(gpt2);
    AttentionCase decode;
    decode.causal = true;
    decode.seq = 1;
    decode.past = 5;
    expectAttention(decode);
}

TEST(MsAttention, SharedPastPresentBuffer) {
    AttentionCase c;
    c.shareBuffer = true;
    c.seq = 1;
    c.bufferRows = 6;
    c.pastLength = 3;
    c.causal = true;
    expectAttention(c);
}

TEST(MsQAttention, QuantizedProjectionThenAttentionWithPastAndKeyLengths) {
    // uint8 input with a zero point, int8 weights with per-column scales and zero points.
    const std::int64_t B = 2, S = 3, Din = 5, N = 2, D = 8, H = 4, P = 2, T = P + S, width = 3 * D;
    std::vector<std::uint8_t> x(static_cast<std::size_t>(B * S * Din));
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256);
    std::vector<std::int8_t> w(static_cast<std::size_t>(Din * width));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<std::int8_t>(static_cast<int>((i * 53 + 7) % 255) - 127);
    const auto bias = wave(width, 0.3, 0.2), past = wave(2 * B * N * P * H, 0.8);
    std::vector<double> wScale(static_cast<std::size_t>(width)), wZero(wScale.size());
    for (std::int64_t c = 0; c < width; ++c) {
        wScale[static_cast<std::size_t>(c)] = 0.002 + 0.0003 * static_cast<double>(c % 5);
        wZero[static_cast<std::size_t>(c)] = static_cast<double>(c % 3) - 1.0;
    }
    const double xScale = 0.01, xZero = 128;
    std::vector<std::int8_t> wZeroInt(wZero.begin(), wZero.end());
    OneNodeSpec spec = nodeSpec(
        "QAttention", 1,
        {Value(makeTensor<std::uint8_t>({B, S, Din}, x)),
         Value(makeTensor<std::int8_t>({Din, width}, w)), Value(floatTensor({width}, bias)),
         Value(floatTensor({1}, {xScale})), Value(floatTensor({width}, wScale)),
         Value(int32Tensor({B}, {5, 3})), Value(makeTensor<std::uint8_t>({1}, {128})),
         Value(makeTensor<std::int8_t>({width}, wZeroInt)),
         Value(floatTensor({2, B, N, P, H}, past))},
        2, kMsDomain);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "num_heads", std::int64_t{2});
        setAttr(n, "unidirectional", std::int64_t{1});
    };
    std::vector<double> qkv(static_cast<std::size_t>(B * S * width));
    for (std::int64_t r = 0; r < B * S; ++r)
        for (std::int64_t c = 0; c < width; ++c) {
            double sum = bias[static_cast<std::size_t>(c)];
            for (std::int64_t i = 0; i < Din; ++i)
                sum += (x[static_cast<std::size_t>(r * Din + i)] - xZero) * xScale *
                       (w[static_cast<std::size_t>(i * width + c)] -
                        wZero[static_cast<std::size_t>(c)]) *
                       wScale[static_cast<std::size_t>(c)];
            qkv[static_cast<std::size_t>(r * width + c)] = sum;
        }
    ReferenceProblem p;
    p.batch = B;
    p.heads = p.kvHeads = N;
    p.queries = S;
    p.keys = T;
    p.headSize = p.vHeadSize = H;
    p.q = toHeadMajor(qkv, B, S, N, H, width, 0);
    const auto newK = toHeadMajor(qkv, B, S, N, H, width, D),
               newV = toHeadMajor(qkv, B, S, N, H, width, 2 * D);
    std::vector<double> present(static_cast<std::size_t>(2 * B * N * T * H));
    for (std::int64_t kv = 0; kv < 2; ++kv)
        for (std::int64_t bh = 0; bh < B * N; ++bh)
            for (std::int64_t j = 0; j < T; ++j)
                for (std::int64_t d = 0; d < H; ++d)
                    present[static_cast<std::size_t>(((kv * B * N + bh) * T + j) * H + d)] =
                        j < P
                            ? past[static_cast<std::size_t>(((kv * B * N + bh) * P + j) * H + d)]
                            : (kv == 0 ? newK
                                       : newV)[static_cast<std::size_t>((bh * S + j - P) * H + d)];
    p.k.assign(present.begin(), present.begin() + B * N * T * H);
    p.v.assign(present.begin() + B * N * T * H, present.end());
    p.scale = 0.5;
    p.visible = [](std::int64_t, std::int64_t, std::int64_t s, std::int64_t j) {
        return j <= P + s;
    };
    p.additive = [](std::int64_t b, std::int64_t, std::int64_t, std::int64_t j) {
        return j < (b == 0 ? 5 : 3) ? 0.0 : -10000.0;
    };
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floatTensor({B, S, D}, referenceAttention(p)),
                             kTolerance));
    EXPECT_TRUE(
        tensorsClose(result->at(1).tensor(), floatTensor({2, B, N, T, H}, present), kTolerance));
}

OneNodeSpec attentionSpec(std::vector<Value> inputs, std::int64_t heads,
                          std::function<void(onnx::NodeProto&)> more = {}) {
    OneNodeSpec spec = nodeSpec("Attention", 1, std::move(inputs), 1, kMsDomain);
    spec.attributes = [heads, more](onnx::NodeProto& n) {
        setAttr(n, "num_heads", heads);
        if (more) more(n);
    };
    return spec;
}

TEST(MsAttention, RefusesHostileInputs) {
    const Value x(floatTensor({1, 2, 4}, wave(8, 0.1))), w(floatTensor({4, 24}, wave(96, 0.2))),
        b(floatTensor({24}, wave(24, 0.3)));
    expectRefused(attentionSpec({x, w, b}, 0), {"num_heads"});
    expectRefused(attentionSpec({x, w, b}, 3), {"hidden size 8", "3 heads"});
    expectRefused(attentionSpec({x, Value(floatTensor({4, 20}, wave(80, 0.2))), Value()}, 2),
                  {"weights width 20"});
    expectRefused(attentionSpec({x, Value(floatTensor({5, 24}, wave(120, 0.2))), b}, 2),
                  {"weights must be [4"});
    expectRefused(attentionSpec({x, w, b, Value(int32Tensor({4}, {2, 2, 0, 0}))}, 2),
                  {"mask_index of shape [4]"});  // [3B + 2] is not supported
    expectRefused(attentionSpec({x, w, b, Value(int32Tensor({1}, {-1}))}, 2),
                  {"mask_index[0] = -1"});
    expectRefused(attentionSpec({x, w, b, Value(int32Tensor({1, 1, 1, 1}, {1}))}, 2),
                  {"mask_index must be [1, 1, max, max]"});
    expectRefused(
        attentionSpec({x, w, b, Value(), Value(floatTensor({2, 1, 3, 3, 4}, wave(72, 0.1)))}, 2),
        {"past must be"});
    expectRefused(
        attentionSpec({x, w, b}, 2,
                      [](onnx::NodeProto& n) { setAttr(n, "do_rotary", std::int64_t{1}); }),
        {"do_rotary"});
    expectRefused(
        attentionSpec({x, w, b}, 2,
                      [](onnx::NodeProto& n) {
                          setAttr(n, "qkv_hidden_sizes", std::vector<std::int64_t>{8, 4, 12});
                      }),
        {"qkv_hidden_sizes"});
    expectRefused(
        attentionSpec(
            {x, w, b, Value(), Value(floatTensor({2, 1, 2, 3, 4}, wave(48, 0.1))), Value(),
             Value(int32Tensor({1}, {2}))},
            2,
            [](onnx::NodeProto& n) { setAttr(n, "past_present_share_buffer", std::int64_t{1}); }),
        {"past_sequence_length 2"});
}

}  // namespace
}  // namespace onnxlens::testing
