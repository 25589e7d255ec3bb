// com.microsoft GroupQueryAttention (ONNX Runtime's contrib operator, the attention of the LLM
// decoders onnxruntime-genai builds), as ONNX Runtime 1.30's CPU kernel computes it:
//
// - query [B, S, N*H] with key/value [B, S, KV*H], or packed QKV [B, S, (N + 2*KV)*H];
//   past_key/past_value [B, KV, P, H] (BNSH; P may be a larger shared buffer, or 0).
// - seqlens_k[b] + 1 = T_b, the valid total length of batch b; total_sequence_length the batch
//   maximum. S == total_sequence_length is the first prompt: no past, each batch's new tokens at
//   0..S-1 (right padding: query rows s >= T_b attend to keys [0, T_b)). Otherwise the past of
//   batch b is T_b - S rows and the new tokens follow it (decode, chunked prefill).
// - present_key/present_value [B, KV, max(total, P), H]: the past rows copied once, the new
//   (rotated) rows after them, the rest zero; the attention reads the keys and values there.
// - rotary (do_rotary, cos/sin caches [max_pos, rotary_dim/2]) rotates q and k at positions
//   past + s; with position_ids, pid[b, s] (first prompt: pid[0] + s, as ONNX Runtime does).
// - causal (default) with local_window_size W: query at position p sees keys (p - W, p];
//   causal = 0 sees all T_b keys. softcap, attention_bias (after softcap), smooth_softmax and
//   head_sink (a per-head sink logit in the softmax denominator), qk_output (1: scores before
//   softmax, 2: probabilities; 0 outside each row's key range) as output 3.
// Quantized KV caches, the windowed cache (sliding_window_cache) and the Q/K RMS norm inputs
// are refused with an error naming them, as ONNX Runtime's CPU kernel refuses the latter.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "MsAttentionCore.h"
#include "OpFamilies.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

namespace {

constexpr const char* kOp = "GroupQueryAttention";

std::string msg(const std::string& text) { return std::string(kOp) + ": " + text; }

// Inputs by index (ONNX Runtime's schema).
enum Input {
    kQuery = 0,
    kKey,
    kValue,
    kPastKey,
    kPastValue,
    kSeqlensK,
    kTotalSequenceLength,
    kCosCache,
    kSinCache,
    kPositionIds,
    kAttentionBias,
    kHeadSink,
    kKScale,
    kVScale,
    kQNormWeight,
    kKNormWeight,
};

class GroupQueryAttentionKernel final : public Kernel {
  public:
    explicit GroupQueryAttentionKernel(const NodeInfo& node)
        : heads_(node.getInt("num_heads")),
          kvHeads_(node.getInt("kv_num_heads")),
          window_(node.getInt("local_window_size", -1)),
          qkOutput_(node.hasOutput(3) ? node.getInt("qk_output", 0) : 0),
          causal_(node.getInt("causal", 1) != 0),
          rotary_(node.getInt("do_rotary", 0) != 0),
          interleaved_(node.getInt("rotary_interleaved", 0) != 0),
          smooth_(node.getInt("smooth_softmax", 0) != 0),
          scale_(node.getFloat("scale", 0.0f)),
          softcap_(node.getFloat("softcap", 0.0f)) {
        require(heads_ > 0,
                [&] { return msg("num_heads must be positive, got " + std::to_string(heads_)); });
        require(kvHeads_ > 0, [&] {
            return msg("kv_num_heads must be positive, got " + std::to_string(kvHeads_));
        });
        require(heads_ % kvHeads_ == 0, [&] {
            return msg("num_heads " + std::to_string(heads_) +
                       " is not a multiple of kv_num_heads " + std::to_string(kvHeads_));
        });
        require(window_ == -1 || window_ > 0, [&] {
            return msg("local_window_size must be -1 or positive, got " + std::to_string(window_));
        });
        require(causal_ || window_ == -1,
                [&] { return msg("local_window_size must be -1 when causal is 0"); });
        require(qkOutput_ >= 0 && qkOutput_ <= 2, [&] {
            return msg("qk_output must be 0, 1 or 2, got " + std::to_string(qkOutput_));
        });
        require(std::isfinite(scale_) && scale_ >= 0, [&] {
            return msg("scale must be finite and not negative (0 = 1/sqrt(head_size))");
        });
        require(std::isfinite(softcap_) && softcap_ >= 0,
                [&] { return msg("softcap must be finite and not negative"); });
        require(node.getInt("sliding_window_cache", 0) == 0, [&] {
            return msg("sliding_window_cache = 1 (a window-sized KV cache) is not supported");
        });
        for (const char* quant : {"k_quant_type", "v_quant_type"}) {
            const std::string type = node.getString(quant, "NONE");
            require(type == "NONE", [&] {
                return msg(std::string(quant) + " '" + type +
                           "': quantized KV caches are not supported");
            });
        }
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& query = inputTensor(inputs, kQuery);
        const Tensor* key = optionalInputTensor(inputs, kKey);
        const Tensor* value = optionalInputTensor(inputs, kValue);
        const Tensor* pastKey = optionalInputTensor(inputs, kPastKey);
        const Tensor* pastValue = optionalInputTensor(inputs, kPastValue);
        const Tensor* seqlensK = optionalInputTensor(inputs, kSeqlensK);
        const Tensor* totalInput = optionalInputTensor(inputs, kTotalSequenceLength);
        const Tensor* cosCache = optionalInputTensor(inputs, kCosCache);
        const Tensor* sinCache = optionalInputTensor(inputs, kSinCache);
        const Tensor* positionIds = optionalInputTensor(inputs, kPositionIds);
        const Tensor* attentionBias = optionalInputTensor(inputs, kAttentionBias);
        const Tensor* headSink = optionalInputTensor(inputs, kHeadSink);
        require(!optionalInputTensor(inputs, kQNormWeight) &&
                    !optionalInputTensor(inputs, kKNormWeight),
                [&] {
                    return msg(
                        "q_norm_weight/k_norm_weight (a Q/K RMS norm before attention) are not "
                        "supported, as in ONNX Runtime's CPU kernel");
                });
        require(seqlensK && totalInput,
                [&] { return msg("seqlens_k and total_sequence_length are required"); });

        requireCountable({{&query, "query"},
                          {key, "key"},
                          {value, "value"},
                          {pastKey, "past_key"},
                          {pastValue, "past_value"},
                          {cosCache, "cos_cache"},
                          {sinCache, "sin_cache"},
                          {positionIds, "position_ids"},
                          {attentionBias, "attention_bias"}},
                         kOp);
        // Shapes.
        requireAttentionFloat(query, ValueName{kOp, "query"});
        require(query.rank() == 3, [&] {
            return msg("query must be 3-D [batch, sequence, hidden], got " +
                       shapeToString(query.shape()));
        });
        const std::int64_t batch = query.dim(0), seq = query.dim(1), hidden = query.dim(2);
        require((key == nullptr) == (value == nullptr), [&] {
            return msg("key and value must be given together (or neither, for packed QKV)");
        });
        const bool packed = key == nullptr;
        const std::int64_t slots =
            packed
                ? checkedSum(heads_, checkedSum(kvHeads_, kvHeads_, ValueName{kOp, "kv_num_heads"}),
                             ValueName{kOp, "num_heads + 2 * kv_num_heads"})
                : heads_;
        require(hidden % slots == 0 && hidden > 0, [&] {
            return msg(std::string("query hidden size ") + std::to_string(hidden) +
                       " does not split into " + std::to_string(slots) + " heads" +
                       (packed ? " (num_heads + 2 * kv_num_heads, packed QKV)" : " (num_heads)"));
        });
        const std::int64_t headSize = hidden / slots;
        if (!packed) {
            // Not structured bindings: clang 14 does not let the message lambdas capture them.
            for (const auto& input : {std::pair{key, "key"}, std::pair{value, "value"}}) {
                const Tensor* t = input.first;
                const char* name = input.second;
                require(t->dtype() == query.dtype(),
                        [&] { return msg(std::string(name) + " type differs from query"); });
                require(t->rank() == 3 && t->dim(0) == batch && t->dim(1) == seq &&
                            t->dim(2) == kvHeads_ * headSize,
                        [&] {
                            return msg(
                                std::string(name) + " must be [" + std::to_string(batch) + ", " +
                                std::to_string(seq) + ", " + std::to_string(kvHeads_ * headSize) +
                                "] (kv_num_heads * head_size), got " + shapeToString(t->shape()));
                        });
            }
        }
        require((pastKey == nullptr) == (pastValue == nullptr),
                [&] { return msg("past_key and past_value must be given together"); });
        std::int64_t pastRows = 0;
        if (pastKey) {
            for (const auto& input :
                 {std::pair{pastKey, "past_key"}, std::pair{pastValue, "past_value"}}) {
                const Tensor* t = input.first;
                const char* name = input.second;
                require(t->dtype() == query.dtype(), [&] {
                    return msg(std::string(name) + " is " + dataTypeName(t->dtype()) +
                               " but query is " + dataTypeName(query.dtype()) +
                               " (quantized KV caches are not supported)");
                });
                require(t->rank() == 4 && t->dim(0) == batch && t->dim(1) == kvHeads_ &&
                            t->dim(3) == headSize,
                        [&] {
                            return msg(std::string(name) + " must be [" + std::to_string(batch) +
                                       ", " + std::to_string(kvHeads_) + ", past, " +
                                       std::to_string(headSize) + "], got " +
                                       shapeToString(t->shape()));
                        });
            }
            require(pastValue->dim(2) == pastKey->dim(2),
                    [&] { return msg("past_key and past_value lengths differ"); });
            pastRows = pastKey->dim(2);
        }

        // Lengths.
        require(seqlensK->dtype() == DataType::Int32 && seqlensK->rank() == 1 &&
                    seqlensK->dim(0) == batch,
                [&] {
                    return msg("seqlens_k must be int32 [" + std::to_string(batch) + "], got " +
                               dataTypeName(seqlensK->dtype()) + " " +
                               shapeToString(seqlensK->shape()));
                });
        require(totalInput->dtype() == DataType::Int32 && totalInput->numel() == 1, [&] {
            return msg("total_sequence_length must be one int32, got " +
                       std::string(dataTypeName(totalInput->dtype())) + " " +
                       shapeToString(totalInput->shape()));
        });
        const std::int64_t total = totalInput->data<std::int32_t>()[0];
        require(total >= 1, [&] {
            return msg("total_sequence_length must be positive, got " + std::to_string(total));
        });
        const bool firstPrompt = seq == total;
        const std::int32_t* seqlens = seqlensK->data<std::int32_t>();
        std::vector<std::int64_t> valid(static_cast<std::size_t>(batch)),
            past(static_cast<std::size_t>(batch));
        for (std::int64_t b = 0; b < batch; ++b) {
            const std::int64_t sk = seqlens[b];
            require(sk >= 0 && sk < total, [&] {
                return msg("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(sk) +
                           " is outside [0, total_sequence_length " + std::to_string(total) + ")");
            });
            const auto bi = static_cast<std::size_t>(b);
            valid[bi] = sk + 1;
            past[bi] = firstPrompt ? 0 : sk + 1 - seq;
            require(past[bi] >= 0, [&] {
                return msg("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(sk) +
                           " is too small for sequence length " + std::to_string(seq));
            });
            require(past[bi] <= pastRows, [&] {
                return msg("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(sk) +
                           " needs " + std::to_string(past[bi]) + " past rows but past_key holds " +
                           std::to_string(pastRows));
            });
        }
        const std::int64_t presentRows = std::max(total, pastRows);

        // Rotary positions and caches.
        std::int64_t rotaryDim = 0;
        std::vector<std::int64_t> positions;  // [batch * seq]
        if (rotary_) {
            require(cosCache && sinCache,
                    [&] { return msg("do_rotary needs cos_cache and sin_cache"); });
            require(cosCache->dtype() == query.dtype() && sinCache->dtype() == query.dtype(),
                    [&] { return msg("cos_cache and sin_cache must have the query's type"); });
            require(cosCache->rank() == 2 && cosCache->shape() == sinCache->shape(), [&] {
                return msg(
                    "cos_cache and sin_cache must both be [max_position, rotary_dim / 2], "
                    "got " +
                    shapeToString(cosCache->shape()) + " and " + shapeToString(sinCache->shape()));
            });
            rotaryDim = 2 * cosCache->dim(1);
            require(rotaryDim > 0 && rotaryDim <= headSize, [&] {
                return msg("cos_cache width " + std::to_string(cosCache->dim(1)) +
                           " must be in [1, head_size / 2 = " + std::to_string(headSize / 2) + "]");
            });
            std::vector<std::int64_t> ids;
            if (positionIds) {
                require(isInteger(positionIds->dtype()),
                        [&] { return msg("position_ids must be integers"); });
                ids = positionIds->toInt64Vector();
                require(firstPrompt ? !ids.empty()
                                    : static_cast<std::int64_t>(ids.size()) == batch * seq,
                        [&] {
                            return msg("position_ids must be [" + std::to_string(batch) + ", " +
                                       std::to_string(seq) + "], got " +
                                       shapeToString(positionIds->shape()));
                        });
            }
            positions.resize(static_cast<std::size_t>(batch * seq));
            for (std::int64_t b = 0; b < batch; ++b)
                for (std::int64_t s = 0; s < seq; ++s) {
                    std::int64_t pos = 0;
                    bool overflow = false;
                    if (firstPrompt)
                        overflow = __builtin_add_overflow(ids.empty() ? 0 : ids[0], s, &pos);
                    else
                        pos = ids.empty() ? past[static_cast<std::size_t>(b)] + s
                                          : ids[static_cast<std::size_t>(b * seq + s)];
                    require(!overflow && pos >= 0 && pos < cosCache->dim(0), [&] {
                        return msg("rotary position " + std::to_string(pos) + " (batch " +
                                   std::to_string(b) + ", token " + std::to_string(s) +
                                   ") is outside cos_cache/sin_cache of " +
                                   std::to_string(cosCache->dim(0)) + " positions");
                    });
                    positions[static_cast<std::size_t>(b * seq + s)] = pos;
                }
        }
        if (attentionBias) {
            require(attentionBias->dtype() == query.dtype(),
                    [&] { return msg("attention_bias must have the query's type"); });
            require(attentionBias->rank() == 4 &&
                        (attentionBias->dim(0) == batch || attentionBias->dim(0) == 1) &&
                        (attentionBias->dim(1) == heads_ || attentionBias->dim(1) == 1) &&
                        attentionBias->dim(2) == seq && attentionBias->dim(3) == total,
                    [&] {
                        return msg("attention_bias must be [batch or 1, num_heads or 1, " +
                                   std::to_string(seq) + ", total_sequence_length " +
                                   std::to_string(total) + "], got " +
                                   shapeToString(attentionBias->shape()));
                    });
        }
        if (headSink)
            require(headSink->dtype() == query.dtype() && headSink->rank() == 1 &&
                        headSink->dim(0) == heads_,
                    [&] {
                        return msg("head_sink must be [num_heads = " + std::to_string(heads_) +
                                   "] of the query's type, got " +
                                   shapeToString(headSink->shape()));
                    });

        // Float views of the inputs.
        const Tensor q32 = asFloat(query);
        const Tensor k32 = packed ? Tensor() : asFloat(*key);
        const Tensor v32 = packed ? Tensor() : asFloat(*value);
        const Tensor pastK32 = pastKey ? asFloat(*pastKey) : Tensor();
        const Tensor pastV32 = pastValue ? asFloat(*pastValue) : Tensor();
        const Tensor cos32 = rotary_ ? asFloat(*cosCache) : Tensor();
        const Tensor sin32 = rotary_ ? asFloat(*sinCache) : Tensor();
        const float* qData = q32.data<float>();
        // Rows of the new tokens: (b, head, s) in the query/key/value inputs.
        const HeadRows qRows{qData, seq * hidden, headSize, hidden};
        const HeadRows kRows =
            packed ? HeadRows{qData + heads_ * headSize, seq * hidden, headSize, hidden}
                   : HeadRows{k32.data<float>(), seq * kvHeads_ * headSize, headSize,
                              kvHeads_ * headSize};
        const HeadRows vRows = packed ? HeadRows{qData + (heads_ + kvHeads_) * headSize,
                                                 seq * hidden, headSize, hidden}
                                      : HeadRows{v32.data<float>(), seq * kvHeads_ * headSize,
                                                 headSize, kvHeads_ * headSize};

        // present_key/present_value: past rows, new rows (keys rotated), zeros.
        Tensor presentK(DataType::Float, {batch, kvHeads_, presentRows, headSize});
        Tensor presentV(DataType::Float, {batch, kvHeads_, presentRows, headSize});
        float* pk = presentK.data<float>();
        float* pv = presentV.data<float>();
        const float* cosData = rotary_ ? cos32.data<float>() : nullptr;
        const float* sinData = rotary_ ? sin32.data<float>() : nullptr;
        const std::int64_t half = rotaryDim / 2;
        const auto rowBytes = static_cast<std::size_t>(headSize) * sizeof(float);
        ctx.pool().parallelFor(
            batch * kvHeads_, static_cast<double>(presentRows * headSize * 2),
            [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t item = begin; item < end; ++item) {
                    const std::int64_t b = item / kvHeads_, h = item % kvHeads_;
                    const std::int64_t p = past[static_cast<std::size_t>(b)];
                    float* kDst = pk + item * presentRows * headSize;
                    float* vDst = pv + item * presentRows * headSize;
                    if (p > 0) {
                        const std::int64_t from = item * pastRows * headSize;
                        std::memcpy(kDst, pastK32.data<float>() + from,
                                    static_cast<std::size_t>(p) * rowBytes);
                        std::memcpy(vDst, pastV32.data<float>() + from,
                                    static_cast<std::size_t>(p) * rowBytes);
                    }
                    for (std::int64_t s = 0; s < seq; ++s) {
                        float* kRow = kDst + (p + s) * headSize;
                        std::memcpy(kRow, kRows.at(b, h, s), rowBytes);
                        std::memcpy(vDst + (p + s) * headSize, vRows.at(b, h, s), rowBytes);
                        if (rotary_) {
                            const std::int64_t pos =
                                positions[static_cast<std::size_t>(b * seq + s)];
                            rotateRow(kRow, cosData + pos * half, sinData + pos * half, rotaryDim,
                                      interleaved_);
                        }
                    }
                    const std::int64_t used = (p + seq) * headSize;
                    std::fill(kDst + used, kDst + presentRows * headSize, 0.0f);
                    std::fill(vDst + used, vDst + presentRows * headSize, 0.0f);
                }
            });

        // Rotated queries, [batch, seq, heads, headSize], when rotary is on.
        Tensor rotatedQ;
        HeadRows queries = qRows;
        if (rotary_) {
            rotatedQ = Tensor(DataType::Float, {batch, seq, heads_, headSize});
            float* rq = rotatedQ.data<float>();
            ctx.pool().parallelFor(
                batch * seq, static_cast<double>(heads_ * headSize * 3),
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t item = begin; item < end; ++item) {
                        const std::int64_t b = item / seq, s = item % seq;
                        const std::int64_t pos = positions[static_cast<std::size_t>(item)];
                        for (std::int64_t h = 0; h < heads_; ++h) {
                            float* row = rq + (item * heads_ + h) * headSize;
                            std::memcpy(row, qRows.at(b, h, s), rowBytes);
                            rotateRow(row, cosData + pos * half, sinData + pos * half, rotaryDim,
                                      interleaved_);
                        }
                    }
                });
            queries = HeadRows{rq, seq * heads_ * headSize, headSize, heads_ * headSize};
        }

        Tensor y(DataType::Float, {batch, seq, heads_ * headSize});
        const Tensor bias32 = attentionBias ? asFloat(*attentionBias) : Tensor();
        const Tensor sink32 = headSink ? asFloat(*headSink) : Tensor();
        Tensor qk;
        if (qkOutput_ != 0) qk = Tensor(DataType::Float, {batch, heads_, seq, total});

        AttentionCoreProblem p;
        p.batch = batch;
        p.heads = heads_;
        p.kvHeads = kvHeads_;
        p.queries = seq;
        p.headSize = p.vHeadSize = headSize;
        p.q = queries;
        p.k = HeadRows{pk, kvHeads_ * presentRows * headSize, presentRows * headSize, headSize};
        p.v = HeadRows{pv, kvHeads_ * presentRows * headSize, presentRows * headSize, headSize};
        p.out = y.data<float>();
        p.outBatch = seq * heads_ * headSize;
        p.outHead = headSize;
        p.outRow = heads_ * headSize;
        p.scale = scale_ > 0 ? scale_ : 1.0f / std::sqrt(static_cast<float>(headSize));
        p.softcap = softcap_;
        p.keyCount = valid;
        p.causalOffset = past;
        p.causal = causal_;
        p.window = window_;
        if (attentionBias) {
            p.bias = bias32.data<float>();
            p.biasRow = total;
            p.biasHead = attentionBias->dim(1) == 1 ? 0 : seq * total;
            p.biasBatch = attentionBias->dim(0) == 1 ? 0 : attentionBias->dim(1) * seq * total;
        }
        p.smoothSoftmax = smooth_;
        p.headSink = headSink ? sink32.data<float>() : nullptr;
        if (qkOutput_ != 0) {
            p.qk = qk.data<float>();
            p.qkMode = static_cast<int>(qkOutput_);
            p.qkColumns = total;
        }
        runAttentionCore(ctx, p);

        const DataType type = query.dtype();
        auto narrow = [&](Tensor t) { return type == DataType::Float ? t : t.castTo(type); };
        outputs[0] = Value(narrow(y));
        if (outputs.size() > 1) outputs[1] = Value(narrow(presentK));
        if (outputs.size() > 2) outputs[2] = Value(narrow(presentV));
        if (outputs.size() > 3 && qkOutput_ != 0) outputs[3] = Value(narrow(qk));
    }

  private:
    std::int64_t heads_, kvHeads_, window_, qkOutput_;
    bool causal_, rotary_, interleaved_, smooth_;
    float scale_, softcap_;
};

}  // namespace

void registerMsGroupQueryAttentionOps(KernelRegistry& registry) {
    registry.add<GroupQueryAttentionKernel>(kOp, 1, kLatestOpset, "com.microsoft");
}

}  // namespace onnxlens::engine::ops
