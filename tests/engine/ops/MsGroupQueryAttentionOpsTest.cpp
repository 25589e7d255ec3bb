// com.microsoft GroupQueryAttention against a double-precision reference written here from
// ONNX Runtime's semantics (prefill and decode, packed and separate QKV, grouped heads, rotary
// halves and interleaved, local window, softcap, per-batch lengths, bias, sinks, qk output) and
// its refusals of hostile inputs.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "MsAttentionTestSupport.h"

namespace onnxlens::testing {
namespace {

using namespace msattention;

struct GqaCase {
    std::int64_t batch = 1, seq = 5, heads = 4, kvHeads = 2, headSize = 8, pastRows = 0;
    std::int32_t total = 5;
    std::vector<std::int32_t> seqlens{4};
    bool packed = false, rotary = false, interleaved = false, causal = true, smooth = false;
    bool sink = false, bias = false;
    std::int64_t rotaryHalf = 0;  // cos/sin width; 0: head_size / 2
    std::int64_t cacheRows = 24;  // cos/sin rows
    std::int64_t window = -1;
    float softcap = 0.0f, scale = 0.0f;
    std::vector<std::int64_t> positionIds;  // [batch, seq], or empty
    int qkOutput = 0;
};

struct GqaRun {
    Result<std::vector<Value>> result;
    std::vector<double> output, presentKey, presentValue, qk;  // the reference
    Shape outputShape, presentShape, qkShape;
};

GqaRun runGqa(const GqaCase& c) {
    const std::int64_t B = c.batch, S = c.seq, N = c.heads, KV = c.kvHeads, H = c.headSize;
    const std::int64_t P = c.pastRows, total = c.total, present = std::max<std::int64_t>(total, P);
    const std::int64_t half = c.rotaryHalf > 0 ? c.rotaryHalf : H / 2;
    const auto q = wave(B * S * N * H, 0.3), k = wave(B * S * KV * H, 1.1),
               v = wave(B * S * KV * H, 2.3), pastK = wave(B * KV * P * H, 0.7),
               pastV = wave(B * KV * P * H, 1.9), sinks = wave(N, 0.5, 2.0),
               biasValues = wave(B * N * S * total, 0.9, 0.5);
    std::vector<double> cosines(static_cast<std::size_t>(c.cacheRows * half)),
        sines(cosines.size());
    for (std::int64_t pos = 0; pos < c.cacheRows; ++pos)
        for (std::int64_t i = 0; i < half; ++i) {
            const double angle =
                static_cast<double>(pos) / std::pow(10.0, 0.5 * static_cast<double>(i));
            at(cosines, half, pos, i) = std::cos(angle);
            at(sines, half, pos, i) = std::sin(angle);
        }

    std::vector<Value> inputs;
    if (c.packed) {
        std::vector<double> qkv;
        for (std::int64_t t = 0; t < B * S; ++t) {
            qkv.insert(qkv.end(), q.begin() + t * N * H, q.begin() + (t + 1) * N * H);
            qkv.insert(qkv.end(), k.begin() + t * KV * H, k.begin() + (t + 1) * KV * H);
            qkv.insert(qkv.end(), v.begin() + t * KV * H, v.begin() + (t + 1) * KV * H);
        }
        inputs = {Value(floatTensor({B, S, (N + 2 * KV) * H}, qkv)), Value(), Value()};
    } else {
        inputs = {Value(floatTensor({B, S, N * H}, q)), Value(floatTensor({B, S, KV * H}, k)),
                  Value(floatTensor({B, S, KV * H}, v))};
    }
    inputs.push_back(Value(floatTensor({B, KV, P, H}, pastK)));
    inputs.push_back(Value(floatTensor({B, KV, P, H}, pastV)));
    inputs.push_back(Value(int32Tensor({B}, c.seqlens)));
    inputs.push_back(Value(int32Tensor({}, {c.total})));
    const bool extra = c.rotary || !c.positionIds.empty() || c.bias || c.sink;
    if (extra) {
        inputs.push_back(c.rotary ? Value(floatTensor({c.cacheRows, half}, cosines)) : Value());
        inputs.push_back(c.rotary ? Value(floatTensor({c.cacheRows, half}, sines)) : Value());
        inputs.push_back(c.positionIds.empty()
                             ? Value()
                             : Value(makeTensor<std::int64_t>({B, S}, c.positionIds)));
        inputs.push_back(c.bias ? Value(floatTensor({B, N, S, total}, biasValues)) : Value());
        inputs.push_back(c.sink ? Value(floatTensor({N}, sinks)) : Value());
    }
    OneNodeSpec spec = nodeSpec("GroupQueryAttention", 1, inputs, c.qkOutput ? 4 : 3, kMsDomain);
    spec.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "num_heads", c.heads);
        setAttr(n, "kv_num_heads", c.kvHeads);
        if (c.rotary) setAttr(n, "do_rotary", std::int64_t{1});
        if (c.interleaved) setAttr(n, "rotary_interleaved", std::int64_t{1});
        if (c.window > 0) setAttr(n, "local_window_size", c.window);
        if (c.softcap > 0) setAttr(n, "softcap", c.softcap);
        if (c.scale > 0) setAttr(n, "scale", c.scale);
        if (!c.causal) setAttr(n, "causal", std::int64_t{0});
        if (c.smooth) setAttr(n, "smooth_softmax", std::int64_t{1});
        if (c.qkOutput) setAttr(n, "qk_output", static_cast<std::int64_t>(c.qkOutput));
    };

    GqaRun run{runOneNode(spec), {}, {}, {}, {}, {}, {}, {}};
    run.outputShape = {B, S, N * H};
    run.presentShape = {B, KV, present, H};
    run.qkShape = {B, N, S, total};

    // Reference: lengths, positions, rotated q and k, present buffers, visibility.
    const bool firstPrompt = S == total;
    std::vector<std::int64_t> valid(static_cast<std::size_t>(B)), past(valid.size());
    for (std::int64_t b = 0; b < B; ++b) {
        valid[static_cast<std::size_t>(b)] = c.seqlens[static_cast<std::size_t>(b)] + 1;
        past[static_cast<std::size_t>(b)] =
            firstPrompt ? 0 : valid[static_cast<std::size_t>(b)] - S;
    }
    auto position = [&](std::int64_t b, std::int64_t s) -> std::int64_t {
        if (firstPrompt) return (c.positionIds.empty() ? 0 : c.positionIds[0]) + s;
        if (!c.positionIds.empty()) return c.positionIds[static_cast<std::size_t>(b * S + s)];
        return past[static_cast<std::size_t>(b)] + s;
    };
    ReferenceProblem p;
    p.batch = B;
    p.heads = N;
    p.kvHeads = KV;
    p.queries = S;
    p.keys = present;
    p.headSize = p.vHeadSize = H;
    p.q = toHeadMajor(q, B, S, N, H);
    run.presentKey.assign(static_cast<std::size_t>(B * KV * present * H), 0.0);
    run.presentValue = run.presentKey;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < KV; ++h) {
            const std::int64_t pb = past[static_cast<std::size_t>(b)];
            for (std::int64_t j = 0; j < pb; ++j)
                for (std::int64_t d = 0; d < H; ++d) {
                    const auto from = static_cast<std::size_t>(((b * KV + h) * P + j) * H + d);
                    at(run.presentKey, H, (b * KV + h) * present + j, d) = pastK[from];
                    at(run.presentValue, H, (b * KV + h) * present + j, d) = pastV[from];
                }
            for (std::int64_t s = 0; s < S; ++s) {
                double* kRow = &at(run.presentKey, H, (b * KV + h) * present + pb + s, 0);
                for (std::int64_t d = 0; d < H; ++d) {
                    kRow[d] = k[static_cast<std::size_t>(((b * S + s) * KV + h) * H + d)];
                    at(run.presentValue, H, (b * KV + h) * present + pb + s, d) =
                        v[static_cast<std::size_t>(((b * S + s) * KV + h) * H + d)];
                }
                if (c.rotary) {
                    const std::int64_t pos = position(b, s);
                    rotate(kRow, &cosines[static_cast<std::size_t>(pos * half)],
                           &sines[static_cast<std::size_t>(pos * half)], half, c.interleaved);
                }
            }
        }
    if (c.rotary)
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < N; ++h)
                for (std::int64_t s = 0; s < S; ++s) {
                    const std::int64_t pos = position(b, s);
                    rotate(&at(p.q, H, (b * N + h) * S + s, 0),
                           &cosines[static_cast<std::size_t>(pos * half)],
                           &sines[static_cast<std::size_t>(pos * half)], half, c.interleaved);
                }
    p.k = run.presentKey;
    p.v = run.presentValue;
    p.scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(H));
    p.softcap = c.softcap;
    p.visible = [&](std::int64_t b, std::int64_t, std::int64_t s, std::int64_t j) {
        const std::int64_t t = valid[static_cast<std::size_t>(b)];
        const std::int64_t hi =
            c.causal ? std::min(past[static_cast<std::size_t>(b)] + s + 1, t) : t;
        const std::int64_t lo = c.window > 0 ? std::max<std::int64_t>(0, hi - c.window) : 0;
        return j >= lo && j < hi;
    };
    if (c.bias)
        p.additive = [&](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t j) {
            return biasValues[static_cast<std::size_t>(((b * N + h) * S + s) * total + j)];
        };
    p.smooth = c.smooth;
    if (c.sink) p.sink = sinks;
    std::vector<double> probabilities, scores;
    run.output = referenceAttention(p, &probabilities, &scores);
    if (c.qkOutput) {
        // [B, N, S, present] -> [B, N, S, total]
        const auto& from = c.qkOutput == 1 ? scores : probabilities;
        for (std::int64_t r = 0; r < B * N * S; ++r)
            for (std::int64_t j = 0; j < total; ++j)
                run.qk.push_back(from[static_cast<std::size_t>(r * present + j)]);
    }
    return run;
}

const engine::Tolerance kTolerance{1e-4, 1e-5};

void expectMatches(const GqaCase& c) {
    GqaRun run = runGqa(c);
    ASSERT_TRUE(run.result) << run.result.error().message;
    const auto& out = *run.result;
    EXPECT_TRUE(
        tensorsClose(out.at(0).tensor(), floatTensor(run.outputShape, run.output), kTolerance));
    EXPECT_TRUE(tensorsClose(out.at(1).tensor(), floatTensor(run.presentShape, run.presentKey),
                             kTolerance));
    EXPECT_TRUE(tensorsClose(out.at(2).tensor(), floatTensor(run.presentShape, run.presentValue),
                             kTolerance));
    if (c.qkOutput) {
        ASSERT_EQ(out.size(), 4U);
        EXPECT_TRUE(tensorsClose(out.at(3).tensor(), floatTensor(run.qkShape, run.qk), kTolerance));
    }
}

TEST(MsGroupQueryAttention, PrefillWithGroupedHeadsMatchesTheReference) { expectMatches({}); }

TEST(MsGroupQueryAttention, PrefillWithPackedQkvAndAsManyKvHeadsAsQueryHeads) {
    GqaCase c;
    c.kvHeads = 4;
    c.packed = true;
    expectMatches(c);
}

TEST(MsGroupQueryAttention, PrefillOfTwoRightPaddedSequences) {
    // Batch 1 holds 3 real tokens of 5: its padded query rows attend to the 3 real keys only.
    GqaCase c;
    c.batch = 2;
    c.seqlens = {4, 2};
    expectMatches(c);
}

TEST(MsGroupQueryAttention, DecodeIntoASharedBufferWithDifferentLengthsPerBatch) {
    // Past buffer of 8 rows; batch 0 has 6 past tokens, batch 1 has 3: present keeps 8 rows,
    // rows past each batch's length zero.
    GqaCase c;
    c.batch = 2;
    c.seq = 1;
    c.pastRows = 8;
    c.total = 7;
    c.seqlens = {6, 3};
    expectMatches(c);
}

TEST(MsGroupQueryAttention, DecodeWithPackedQkvAndAPastShorterThanTheTotal) {
    GqaCase c;
    c.batch = 2;
    c.seq = 1;
    c.pastRows = 4;
    c.total = 5;
    c.seqlens = {4, 2};
    c.packed = true;
    expectMatches(c);
}

TEST(MsGroupQueryAttention, ChunkedPrefillAfterAPast) {
    GqaCase c;
    c.seq = 3;
    c.pastRows = 6;
    c.total = 7;
    c.seqlens = {6};
    expectMatches(c);
}

TEST(MsGroupQueryAttention, RotaryHalvesAndInterleavedInPrefillAndDecode) {
    for (bool interleaved : {false, true})
        for (bool decode : {false, true}) {
            SCOPED_TRACE(std::string(interleaved ? "interleaved" : "halves") +
                         (decode ? " decode" : " prefill"));
            GqaCase c;
            c.rotary = true;
            c.interleaved = interleaved;
            c.headSize = 16;
            c.batch = 2;
            if (decode) {
                c.seq = 1;
                c.pastRows = 9;
                c.total = 7;
                c.seqlens = {6, 3};
            } else {
                c.seqlens = {4, 3};
            }
            expectMatches(c);
        }
}

TEST(MsGroupQueryAttention, PartialRotaryOnPackedQkv) {
    GqaCase c;
    c.rotary = true;
    c.packed = true;
    c.headSize = 16;
    c.rotaryHalf = 4;  // rotates the first 8 of 16
    expectMatches(c);
}

TEST(MsGroupQueryAttention, PositionIdsChooseTheRotaryAngles) {
    GqaCase decode;
    decode.rotary = true;
    decode.batch = 2;
    decode.seq = 1;
    decode.pastRows = 5;
    decode.total = 5;
    decode.seqlens = {4, 3};
    decode.positionIds = {11, 2};
    expectMatches(decode);
    GqaCase prompt;  // the first prompt reads only position_ids[0]: positions 7, 8, 9
    prompt.rotary = true;
    prompt.seq = 3;
    prompt.total = 3;
    prompt.seqlens = {2};
    prompt.positionIds = {7, 1, 1};
    expectMatches(prompt);
}

TEST(MsGroupQueryAttention, LocalWindowInPrefillAndDecode) {
    GqaCase prefill;
    prefill.seq = 6;
    prefill.total = 6;
    prefill.seqlens = {5};
    prefill.window = 2;
    expectMatches(prefill);
    GqaCase decode;
    decode.seq = 1;
    decode.pastRows = 8;
    decode.total = 8;
    decode.seqlens = {7};
    decode.window = 3;
    expectMatches(decode);
}

TEST(MsGroupQueryAttention, SoftcapAndCustomScale) {
    GqaCase c;
    c.softcap = 0.5f;
    c.scale = 0.9f;
    expectMatches(c);
}

TEST(MsGroupQueryAttention, NonCausalSeesEveryValidKey) {
    GqaCase c;
    c.batch = 2;
    c.seq = 4;
    c.total = 4;
    c.seqlens = {3, 1};
    c.causal = false;
    expectMatches(c);
}

TEST(MsGroupQueryAttention, AttentionBiasAfterSoftcapWithScoresOutput) {
    GqaCase c;
    c.batch = 2;
    c.seqlens = {4, 4};
    c.bias = true;
    c.softcap = 0.5f;
    c.qkOutput = 1;
    expectMatches(c);
}

TEST(MsGroupQueryAttention, HeadSinkAndSmoothSoftmaxWithProbabilitiesOutput) {
    GqaCase sink;
    sink.sink = true;
    sink.qkOutput = 2;
    sink.window = 2;
    expectMatches(sink);
    GqaCase smooth;
    smooth.smooth = true;
    smooth.seq = 1;
    smooth.pastRows = 4;
    smooth.seqlens = {4};
    expectMatches(smooth);
}

TEST(MsGroupQueryAttention, HalfPrecisionComputesInFloat) {
    const std::int64_t B = 1, S = 1, N = 2, KV = 1, H = 8, P = 3;
    auto half = [](Shape shape, const std::vector<double>& v) {
        return floatTensor(std::move(shape), v).castTo(DataType::Float16);
    };
    const auto q = wave(N * H, 0.2), k = wave(KV * H, 0.4), v = wave(KV * H, 0.6),
               pk = wave(KV * P * H, 0.8), pv = wave(KV * P * H, 1.0);
    OneNodeSpec spec = nodeSpec(
        "GroupQueryAttention", 1,
        {Value(half({B, S, N * H}, q)), Value(half({B, S, KV * H}, k)),
         Value(half({B, S, KV * H}, v)), Value(half({B, KV, P, H}, pk)),
         Value(half({B, KV, P, H}, pv)), Value(int32Tensor({1}, {3})), Value(int32Tensor({}, {4}))},
        3, kMsDomain);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "num_heads", std::int64_t{2});
        setAttr(n, "kv_num_heads", std::int64_t{1});
    };
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    const Tensor& y = result->at(0).tensor();
    ASSERT_EQ(y.dtype(), DataType::Float16);
    // The float run of the same (rounded) values.
    OneNodeSpec f = spec;
    for (auto& value : f.inputs)
        if (value.isTensor() && value.tensor().dtype() == DataType::Float16)
            value = Value(value.tensor().castTo(DataType::Float));
    auto reference = runOneNode(f);
    ASSERT_TRUE(reference) << reference.error().message;
    EXPECT_TRUE(tensorsClose(y.castTo(DataType::Float), reference->at(0).tensor(), {1e-2, 1e-3}));
}

// Hostile inputs: an error naming the node and what is wrong, never a crash.

void expectRefused(const GqaCase& c, const std::function<void(OneNodeSpec&)>& edit,
                   std::initializer_list<const char*> words) {
    // Build the spec as runGqa does, then edit it.
    GqaCase copy = c;
    const std::int64_t B = copy.batch, S = copy.seq, N = copy.heads, KV = copy.kvHeads,
                       H = copy.headSize, P = copy.pastRows;
    OneNodeSpec spec =
        nodeSpec("GroupQueryAttention", 1,
                 {Value(floatTensor({B, S, N * H}, wave(B * S * N * H, 0.1))),
                  Value(floatTensor({B, S, KV * H}, wave(B * S * KV * H, 0.2))),
                  Value(floatTensor({B, S, KV * H}, wave(B * S * KV * H, 0.3))),
                  Value(floatTensor({B, KV, P, H}, wave(B * KV * P * H, 0.4))),
                  Value(floatTensor({B, KV, P, H}, wave(B * KV * P * H, 0.5))),
                  Value(int32Tensor({B}, copy.seqlens)), Value(int32Tensor({}, {copy.total}))},
                 3, kMsDomain);
    spec.attributes = [copy](onnx::NodeProto& n) {
        setAttr(n, "num_heads", copy.heads);
        setAttr(n, "kv_num_heads", copy.kvHeads);
        if (copy.rotary) setAttr(n, "do_rotary", std::int64_t{1});
    };
    edit(spec);
    auto result = runOneNode(spec);
    ASSERT_FALSE(result) << "expected an error";
    const std::string& message = result.error().message;
    EXPECT_NE(message.find("under_test"), std::string::npos) << message;
    for (const char* w : words) EXPECT_NE(message.find(w), std::string::npos) << message;
}

void setHeads(OneNodeSpec& spec, std::int64_t heads, std::int64_t kvHeads,
              std::function<void(onnx::NodeProto&)> more = {}) {
    spec.attributes = [heads, kvHeads, more](onnx::NodeProto& n) {
        setAttr(n, "num_heads", heads);
        setAttr(n, "kv_num_heads", kvHeads);
        if (more) more(n);
    };
}

TEST(MsGroupQueryAttention, RefusesBadHeadCounts) {
    expectRefused({}, [](OneNodeSpec& s) { setHeads(s, 0, 2); }, {"num_heads"});
    expectRefused({}, [](OneNodeSpec& s) { setHeads(s, 4, -1); }, {"kv_num_heads"});
    expectRefused({}, [](OneNodeSpec& s) { setHeads(s, 4, 3); }, {"kv_num_heads", "multiple"});
    expectRefused({}, [](OneNodeSpec& s) { setHeads(s, 3, 1); },
                  {"hidden size 32", "3 heads (num_heads)"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      setHeads(s, 4, 2, [](onnx::NodeProto& n) {
                          setAttr(n, "causal", std::int64_t{0});
                          setAttr(n, "local_window_size", std::int64_t{2});
                      });
                  },
                  {"local_window_size"});
}

TEST(MsGroupQueryAttention, RefusesLengthsOutsideTheCache) {
    GqaCase decode;
    decode.seq = 1;
    decode.pastRows = 4;
    decode.seqlens = {4};
    auto seqlens = [](std::int32_t v) {
        return [v](OneNodeSpec& s) { s.inputs[5] = Value(int32Tensor({1}, {v})); };
    };
    expectRefused(decode, seqlens(9), {"seqlens_k[0] = 9"});
    expectRefused(decode, seqlens(-3), {"seqlens_k[0] = -3"});
    // total 7 with seqlens 6 needs 6 past rows; the buffer holds 4.
    expectRefused(decode,
                  [](OneNodeSpec& s) {
                      s.inputs[5] = Value(int32Tensor({1}, {6}));
                      s.inputs[6] = Value(int32Tensor({}, {7}));
                  },
                  {"past_key holds 4"});
    GqaCase chunk;  // 3 new tokens but seqlens_k says 2 tokens in all
    chunk.seq = 3;
    chunk.pastRows = 4;
    chunk.total = 5;
    chunk.seqlens = {1};
    expectRefused(chunk, [](OneNodeSpec&) {}, {"too small for sequence length 3"});
    expectRefused(decode, [](OneNodeSpec& s) { s.inputs[6] = Value(int32Tensor({}, {0})); },
                  {"total_sequence_length"});
    expectRefused(decode,
                  [](OneNodeSpec& s) {
                      s.inputs[5] = Value(int32Tensor({2}, {1, 1}));
                  },
                  {"seqlens_k must be int32 [1]"});
    expectRefused(decode, [](OneNodeSpec& s) { s.inputs[5] = Value(); }, {"seqlens_k"});
}

TEST(MsGroupQueryAttention, RefusesShortRotaryCachesAndBadShapes) {
    GqaCase decode;
    decode.seq = 1;
    decode.pastRows = 8;
    decode.total = 9;
    decode.seqlens = {8};
    decode.rotary = true;
    auto caches = [](std::int64_t rows, std::int64_t width) {
        return [rows, width](OneNodeSpec& s) {
            s.inputs.push_back(Value(floatTensor({rows, width}, wave(rows * width, 0.1))));
            s.inputs.push_back(Value(floatTensor({rows, width}, wave(rows * width, 0.2))));
        };
    };
    expectRefused(decode, caches(6, 4), {"rotary position 8", "cos_cache"});
    expectRefused(decode, caches(16, 6), {"cos_cache width 6"});
    expectRefused(decode, [](OneNodeSpec&) {}, {"cos_cache and sin_cache"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      s.inputs[0] = Value(floatTensor({5, 32}, wave(160, 0.1)));
                  },
                  {"query must be 3-D"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      s.inputs[3] = Value(floatTensor({1, 2, 8}, wave(16, 0.1)));
                  },
                  {"past_key must be"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      s.inputs[1] = Value(floatTensor({1, 5, 8}, wave(40, 0.1)));
                  },
                  {"key must be"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      s.inputs.resize(14);
                      s.inputs.push_back(Value(floatTensor({8}, wave(8, 0.1))));
                      s.inputs.push_back(Value(floatTensor({8}, wave(8, 0.1))));
                  },
                  {"q_norm_weight"});
    expectRefused({},
                  [](OneNodeSpec& s) {
                      s.inputs[3] = Value(makeTensor<std::uint8_t>({1, 2, 0, 8}, {}));
                  },
                  {"past_key", "uint8"});
    expectRefused({},
                  [](OneNodeSpec& s) {  // empty, but strides from its dimensions would overflow
                      const std::int64_t huge = std::int64_t{1} << 40;
                      s.inputs[0] = Value(Tensor(DataType::Float, {0, huge, huge}));
                  },
                  {"query", "overflows"});
}

// ---- Determinism: the same inputs and thread count give the same bits
// ---------------------------- The scores of a query row once lay in a std::vector whose 64-byte
// alignment depended on the heap; Eigen's vectorized exp and sum over the row peel a scalar head up
// to the first aligned packet, so the probabilities (and a decoder's greedy tokens) changed with
// the heap's history: run to run at 2 threads (each OpenMP thread allocates from its own arena) and
// after another session in the same process.

// One decode step of GroupQueryAttention (8 query heads, 4 kv heads, head size 32, a past of 37):
// large enough for the pool to split the heads over 2 threads.
OneNodeSpec decodeStepSpec() {
    const std::int64_t N = 8, KV = 4, H = 32, P = 37;
    std::vector<Value> inputs{Value(floatTensor({1, 1, N * H}, wave(N * H, 0.3, 3.0))),
                              Value(floatTensor({1, 1, KV * H}, wave(KV * H, 1.1, 3.0))),
                              Value(floatTensor({1, 1, KV * H}, wave(KV * H, 2.3))),
                              Value(floatTensor({1, KV, P, H}, wave(KV * P * H, 0.7, 3.0))),
                              Value(floatTensor({1, KV, P, H}, wave(KV * P * H, 1.9))),
                              Value(int32Tensor({1}, {static_cast<std::int32_t>(P)})),
                              Value(int32Tensor({}, {static_cast<std::int32_t>(P + 1)}))};
    OneNodeSpec spec = nodeSpec("GroupQueryAttention", 1, inputs, 3, kMsDomain);
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "num_heads", std::int64_t{8});
        setAttr(n, "kv_num_heads", std::int64_t{4});
    };
    return spec;
}

std::map<std::string, Value> feedsOf(const OneNodeSpec& spec) {
    std::map<std::string, Value> feeds;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        if (!spec.inputs[i].isNone()) feeds["x" + std::to_string(i)] = spec.inputs[i];
    return feeds;
}

std::vector<Tensor> runSession(engine::Session& session, const OneNodeSpec& spec) {
    auto result = session.run(feedsOf(spec));
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return {};
    }
    std::vector<Tensor> outputs;
    for (const Value& v : *result) outputs.push_back(v.tensor());
    return outputs;
}

::testing::AssertionResult sameBits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << "output counts differ";
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].shape() != b[i].shape() || a[i].byteSize() != b[i].byteSize() ||
            std::memcmp(a[i].raw(), b[i].raw(), a[i].byteSize()) != 0)
            return ::testing::AssertionFailure() << "output " << i << " differs in its bits";
    return ::testing::AssertionSuccess();
}

TEST(MsGroupQueryAttention, RepeatedRunsAtTwoThreadsGiveTheSameBitsWhateverTheHeapHolds) {
    const OneNodeSpec spec = decodeStepSpec();
    auto session = compileForTest(buildOneNodeModel(spec), true, 2);
    ASSERT_TRUE(session);
    const std::vector<Tensor> first = runSession(*session, spec);
    ASSERT_EQ(first.size(), 3u);
    // Blocks of assorted sizes kept alive between the runs move where the next scratch lands.
    std::vector<std::vector<char>> held;
    for (int run = 0; run < 24; ++run) {
        for (int i = 0; i < 5; ++i)
            held.emplace_back(static_cast<std::size_t>(8 + 16 * ((run * 5 + i) % 7) + 4 * run));
        ASSERT_TRUE(sameBits(runSession(*session, spec), first)) << "run " << run;
    }
    // And the values are right: the engine at 1 thread agrees closely.
    const std::vector<Tensor> serial =
        runSession(*compileForTest(buildOneNodeModel(spec), true, 1), spec);
    ASSERT_EQ(serial.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(tensorsClose(first[i], serial[i]));
}

TEST(MsGroupQueryAttention, ASessionAtOneThreadAfterOneAtTwoMatchesAFreshOneAtOneThread) {
    const OneNodeSpec spec = decodeStepSpec();
    const onnx::ModelProto model = buildOneNodeModel(spec);
    std::vector<Tensor> fresh;
    {
        auto session = compileForTest(model, true, 1);
        ASSERT_TRUE(session);
        fresh = runSession(*session, spec);
    }
    {
        auto two = compileForTest(model, true, 2);
        ASSERT_TRUE(two);
        runSession(*two, spec);
    }
    auto one = compileForTest(model, true, 1);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->threads(), 1);
    // Blocks of the size the scores' scratch had (152 bytes) and of a few others take the heap's
    // free chunks, so that the scratch of the next run lands elsewhere.
    std::vector<std::unique_ptr<char[]>> held;
    for (int run = 0; run < 8; ++run) {
        held.push_back(std::make_unique<char[]>(152));
        held.push_back(std::make_unique<char[]>(static_cast<std::size_t>(8 + 16 * (run % 3))));
        EXPECT_TRUE(sameBits(runSession(*one, spec), fresh)) << "run " << run;
    }
}

}  // namespace
}  // namespace onnxlens::testing
