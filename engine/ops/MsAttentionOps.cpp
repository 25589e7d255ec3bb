// com.microsoft MultiHeadAttention, Attention and QAttention (ONNX Runtime's contrib operators of
// ORT-fused BERT and GPT-2 models), as ONNX Runtime 1.30's CPU kernels compute them, on the shared
// attention core (MsAttentionCore.h):
//
// - Padding masks are additive, mask_filter_value (default -10000) on masked keys, in float, as
//   ONNX Runtime adds them: a row whose keys are all masked still attends (evenly, up to the
//   scores). Forms: key lengths [B] (keys j >= len masked), [2B] (ends then starts: j >= end or
//   j < start masked), 0/1 masks [B, total] and [B, S, total], and for Attention the 4-D
//   [B, 1, max, max] mask read at rows past + s (ONNX Runtime's CPU kernel refuses that one; its
//   other kernels read it so). The [3B + 2] form is refused.
// - unidirectional masks keys j > past + s exactly (probability 0), as ONNX Runtime 1.30 does.
// - attention_bias [B or 1, N or 1, S, total] is added after the mask.
//
// MultiHeadAttention: query [B, S, D], key/value [B, L, D]/[B, L, Dv] (bias [D + D + Dv] added
// to q, k, v) with past_key/past_value [B, N, P, H] prepended (present_key/value
// [B, N, P + L, H]), or key/value already [B, N, L, H] (a cross-attention cache: the bias is
// then added to q only and they are returned as present). Output 3 (qk) holds the scores before
// softmax (mask and bias added; keys hidden by unidirectional hold the lowest float). Packed QKV
// and packed KV are refused, as in ONNX Runtime's CPU kernel; so are past_sequence_length and
// cache_indirection (buffer sharing and beam search belong to the decoder-masked variants).
//
// Attention: input [B, S, Din] times weights [Din, Dq + Dk + Dv] (+ bias) gives Q, K, V in one
// product; past [2, B, N, P, H] is prepended (present [2, B, N, P + S, H]); with
// past_present_share_buffer, past and present are [2, B, N, max, H] and past_sequence_length
// says how many rows are valid (the new rows go after them). do_rotary is refused as in ONNX
// Runtime's CPU kernel. QAttention: the same after a product of 8-bit input and weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "DnnlMatMul.h"
#include "DnnlPackedMatMul.h"
#include "MsAttentionCore.h"
#include "OpFamilies.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

namespace {

constexpr const char* kDomain = "com.microsoft";

// An additive mask per (b, s, j): the tensor and its strides (a stride 0 broadcasts).
struct AdditiveMask {
    Tensor values;
    std::int64_t batchStride = 0, rowStride = 0;
};

// The mask of a key padding / mask_index input over `total` keys (0 or `filter`).
AdditiveMask buildPaddingMask(const Tensor& mask, const ValueName& what, std::int64_t batch,
                              std::int64_t seq, std::int64_t total, std::int64_t past, float filter,
                              bool allow4d) {
    require(isInteger(mask.dtype()), [&] {
        return what.text() + " must be int32, got " + std::string(dataTypeName(mask.dtype()));
    });
    const std::vector<std::int64_t> m = mask.toInt64Vector();
    AdditiveMask out;
    auto bound = [&](std::int64_t v, std::int64_t i) {
        require(v >= 0 && v <= total, [&] {
            return what.text() + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                   " is outside [0, " + std::to_string(total) + "]";
        });
        return v;
    };
    const bool startsToo = mask.rank() == 1 && mask.dim(0) % 2 == 0 && mask.dim(0) / 2 == batch;
    if (mask.rank() == 1 && (mask.dim(0) == batch || startsToo)) {
        out.values = Tensor::zeros(DataType::Float, {batch, total});
        float* v = out.values.data<float>();
        const bool starts = startsToo && batch > 0;
        for (std::int64_t b = 0; b < batch; ++b) {
            const std::int64_t end = bound(m[static_cast<std::size_t>(b)], b);
            const std::int64_t start =
                starts ? bound(m[static_cast<std::size_t>(batch + b)], batch + b) : 0;
            for (std::int64_t j = 0; j < total; ++j)
                if (j >= end || j < start) v[b * total + j] = filter;
        }
        out.batchStride = total;
        return out;
    }
    if (mask.rank() == 2 || mask.rank() == 3) {
        const bool perRow = mask.rank() == 3;
        require(mask.dim(0) == batch && mask.dim(mask.rank() - 1) == total &&
                    (!perRow || mask.dim(1) == seq),
                [&] {
                    return what.text() + " must be [" + std::to_string(batch) +
                           (perRow ? ", " + std::to_string(seq) : "") + ", total sequence length " +
                           std::to_string(total) + "], got " + shapeToString(mask.shape());
                });
        out.values = Tensor(DataType::Float, mask.shape());
        float* v = out.values.data<float>();
        for (std::size_t i = 0; i < m.size(); ++i) v[i] = m[i] > 0 ? 0.0f : filter;
        out.batchStride = perRow ? seq * total : total;
        out.rowStride = perRow ? total : 0;
        return out;
    }
    if (mask.rank() == 4 && allow4d) {
        const std::int64_t size = mask.dim(2);
        require(
            mask.dim(0) == batch && mask.dim(1) == 1 && mask.dim(3) == size && size >= past + seq &&
                size >= total,
            [&] {
                return what.text() + " must be [" + std::to_string(batch) +
                       ", 1, max, max] with max >= " + std::to_string(std::max(total, past + seq)) +
                       ", got " + shapeToString(mask.shape());
            });
        out.values = Tensor(DataType::Float, {batch, seq, total});
        float* v = out.values.data<float>();
        for (std::int64_t b = 0; b < batch; ++b)
            for (std::int64_t s = 0; s < seq; ++s)
                for (std::int64_t j = 0; j < total; ++j)
                    v[(b * seq + s) * total + j] =
                        m[static_cast<std::size_t>((b * size + past + s) * size + j)] > 0 ? 0.0f
                                                                                          : filter;
        out.batchStride = seq * total;
        out.rowStride = total;
        return out;
    }
    fail(what.text() + " of shape " + shapeToString(mask.shape()) +
         " is not supported: expected [" + std::to_string(batch) + "] key lengths, [2 * " +
         std::to_string(batch) +
         "] ends and starts, [batch, total] or [batch, sequence, total] 0/1 masks" +
         (allow4d ? " or [batch, 1, max, max]" : ""));
}

// attention_bias [B or 1, N or 1, S, total] into the problem's bias strides.
void setAttentionBias(AttentionCoreProblem& p, const Tensor& bias32, const Tensor& bias,
                      const ValueName& what, std::int64_t total) {
    require(bias.rank() == 4 && (bias.dim(0) == p.batch || bias.dim(0) == 1) &&
                (bias.dim(1) == p.heads || bias.dim(1) == 1) && bias.dim(2) == p.queries &&
                bias.dim(3) == total,
            [&] {
                return what.text() + " must be [batch or 1, num_heads or 1, " +
                       std::to_string(p.queries) + ", " + std::to_string(total) + "], got " +
                       shapeToString(bias.shape());
            });
    p.bias = bias32.data<float>();
    p.biasRow = total;
    p.biasHead = bias.dim(1) == 1 ? 0 : p.queries * total;
    p.biasBatch = bias.dim(0) == 1 ? 0 : bias.dim(1) * p.queries * total;
}

void setMask(AttentionCoreProblem& p, const AdditiveMask& mask) {
    if (!mask.values.defined()) return;
    p.mask = mask.values.data<float>();
    p.maskBatch = mask.batchStride;
    p.maskRow = mask.rowStride;
}

// Copies `rows` rows of `size` floats from a strided source into a contiguous destination,
// adding `bias` (size floats) when given.
void copyRows(float* dst, const float* src, std::int64_t srcStride, std::int64_t rows,
              std::int64_t size, const float* bias) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* from = src + r * srcStride;
        float* to = dst + r * size;
        if (bias)
            for (std::int64_t i = 0; i < size; ++i) to[i] = from[i] + bias[i];
        else
            std::memcpy(to, from, static_cast<std::size_t>(size) * sizeof(float));
    }
}

Tensor narrowTo(const Tensor& t, DataType type) {
    return type == DataType::Float ? t : t.castTo(type);
}

// The output [batch, seq, vHidden] the attention core writes head by head, and the core's
// scale (the attribute, else 1/sqrt(headSize)) and key bounds: every batch item sees `total`
// keys, the causal limit starting after `past`.
Tensor bindOutputAndKeys(AttentionCoreProblem& p, std::int64_t batch, std::int64_t seq,
                         std::int64_t vHidden, std::int64_t vHeadSize, std::int64_t headSize,
                         float scale, std::int64_t total, std::int64_t past, bool causal) {
    Tensor y(DataType::Float, {batch, seq, vHidden});
    p.out = y.data<float>();
    p.outBatch = seq * vHidden;
    p.outHead = vHeadSize;
    p.outRow = vHidden;
    p.scale = scale > 0 ? scale : 1.0f / std::sqrt(static_cast<float>(headSize));
    p.keyCount.assign(static_cast<std::size_t>(batch), total);
    p.causalOffset.assign(static_cast<std::size_t>(batch), past);
    p.causal = causal;
    return y;
}

class MultiHeadAttentionKernel final : public Kernel {
  public:
    explicit MultiHeadAttentionKernel(const NodeInfo& node)
        : heads_(node.getInt("num_heads")),
          causal_(node.getInt("unidirectional", 0) != 0),
          filter_(node.getFloat("mask_filter_value", -10000.0f)),
          scale_(node.getFloat("scale", 0.0f)) {
        require(heads_ > 0,
                [&] { return msg("num_heads must be positive, got " + std::to_string(heads_)); });
        require(std::isfinite(scale_) && scale_ >= 0, [&] {
            return msg("scale must be finite and not negative (0 = 1/sqrt(head_size))");
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& query = inputTensor(inputs, 0);
        const Tensor* key = optionalInputTensor(inputs, 1);
        const Tensor* value = optionalInputTensor(inputs, 2);
        const Tensor* bias = optionalInputTensor(inputs, 3);
        const Tensor* padding = optionalInputTensor(inputs, 4);
        const Tensor* attentionBias = optionalInputTensor(inputs, 5);
        const Tensor* pastKey = optionalInputTensor(inputs, 6);
        const Tensor* pastValue = optionalInputTensor(inputs, 7);
        require(!optionalInputTensor(inputs, 8) && !optionalInputTensor(inputs, 9), [&] {
            return msg(
                "past_sequence_length and cache_indirection (buffer sharing, beam search) "
                "are not supported");
        });
        requireCountable({{&query, "query"},
                          {key, "key"},
                          {value, "value"},
                          {padding, "key_padding_mask"},
                          {attentionBias, "attention_bias"},
                          {pastKey, "past_key"},
                          {pastValue, "past_value"}},
                         "MultiHeadAttention");
        requireAttentionFloat(query, ValueName{"MultiHeadAttention", "query"});
        require(query.rank() != 5, [&] {
            return msg(
                "packed QKV [batch, sequence, heads, 3, head_size] is not "
                "supported, as in ONNX Runtime's CPU kernel");
        });
        require(query.rank() == 3, [&] {
            return msg("query must be 3-D [batch, sequence, hidden], got " +
                       shapeToString(query.shape()));
        });
        require(!key || key->rank() != 5, [&] {
            return msg(
                "packed KV [batch, sequence, heads, 2, head_size] is not supported, as in "
                "ONNX Runtime's CPU kernel");
        });
        require(key && value,
                [&] { return msg("key and value are required (packed QKV is not supported)"); });
        const DataType type = query.dtype();
        require(key->dtype() == type && value->dtype() == type,
                [&] { return msg("key and value must have the query's type"); });
        const std::int64_t batch = query.dim(0), seq = query.dim(1), hidden = query.dim(2);
        require(hidden > 0 && hidden % heads_ == 0, [&] {
            return msg("query hidden size " + std::to_string(hidden) + " does not split into " +
                       std::to_string(heads_) + " heads (num_heads)");
        });
        const std::int64_t headSize = hidden / heads_;
        const bool cached = key->rank() == 4;  // key/value already [B, N, L, H]
        std::int64_t kvSeq = 0, vHidden = 0;
        if (cached) {
            require(value->rank() == 4 && key->dim(0) == batch && key->dim(1) == heads_ &&
                        key->dim(3) == headSize && value->dim(0) == batch &&
                        value->dim(1) == heads_ && value->dim(2) == key->dim(2),
                    [&] {
                        return msg("key and value in BNSH must be [" + std::to_string(batch) +
                                   ", " + std::to_string(heads_) + ", kv_sequence, " +
                                   std::to_string(headSize) + "], got " +
                                   shapeToString(key->shape()) + " and " +
                                   shapeToString(value->shape()));
                    });
            require(!pastKey && !pastValue, [&] {
                return msg("past_key/past_value cannot be combined with key/value in BNSH");
            });
            kvSeq = key->dim(2);
            vHidden = value->dim(3) * heads_;
        } else {
            require(key->rank() == 3 && value->rank() == 3 && key->dim(0) == batch &&
                        key->dim(2) == hidden && value->dim(0) == batch &&
                        value->dim(1) == key->dim(1) && value->dim(2) % heads_ == 0,
                    [&] {
                        return msg(
                            "key must be [" + std::to_string(batch) + ", kv_sequence, " +
                            std::to_string(hidden) + "] and value [" + std::to_string(batch) +
                            ", kv_sequence, num_heads * v_head_size], got " +
                            shapeToString(key->shape()) + " and " + shapeToString(value->shape()));
                    });
            kvSeq = key->dim(1);
            vHidden = value->dim(2);
        }
        const std::int64_t vHeadSize = vHidden / heads_;
        require(vHeadSize > 0, [&] { return msg("value head size is 0"); });
        const std::int64_t biasWidth =
            checkedSum(checkedSum(hidden, hidden, ValueName{"MultiHeadAttention", "bias width"}),
                       vHidden, ValueName{"MultiHeadAttention", "bias width"});
        if (bias)
            require(bias->dtype() == type && bias->rank() == 1 && bias->dim(0) == biasWidth, [&] {
                return msg("bias must be [" + std::to_string(biasWidth) + "], got " +
                           shapeToString(bias->shape()));
            });
        require((pastKey == nullptr) == (pastValue == nullptr),
                [&] { return msg("past_key and past_value must be given together"); });
        std::int64_t past = 0;
        if (pastKey) {
            require(pastKey->dtype() == type && pastValue->dtype() == type,
                    [&] { return msg("past_key and past_value must have the query's type"); });
            require(pastKey->rank() == 4 && pastKey->dim(0) == batch && pastKey->dim(1) == heads_ &&
                        pastKey->dim(3) == headSize && pastValue->rank() == 4 &&
                        pastValue->dim(0) == batch && pastValue->dim(1) == heads_ &&
                        pastValue->dim(2) == pastKey->dim(2) && pastValue->dim(3) == vHeadSize,
                    [&] {
                        return msg("past_key/past_value must be [" + std::to_string(batch) + ", " +
                                   std::to_string(heads_) + ", past, head_size], got " +
                                   shapeToString(pastKey->shape()) + " and " +
                                   shapeToString(pastValue->shape()));
                    });
            past = pastKey->dim(2);
        }
        const std::int64_t total =
            checkedSum(past, kvSeq, ValueName{"MultiHeadAttention", "past + kv sequence length"});

        const Tensor q32 = asFloat(query), k32 = asFloat(*key), v32 = asFloat(*value);
        const Tensor bias32 = bias ? asFloat(*bias) : Tensor();
        const float* biasData = bias ? bias32.data<float>() : nullptr;
        // Queries, with the bias added when there is one.
        Tensor biasedQ;
        const float* qData = q32.data<float>();
        if (biasData) {
            biasedQ = Tensor(DataType::Float, {batch, seq, hidden});
            copyRows(biasedQ.data<float>(), qData, hidden, batch * seq, hidden, biasData);
            qData = biasedQ.data<float>();
        }

        // Keys and values: the cache as given, or past + new (+ bias) in present buffers.
        Tensor presentK, presentV;
        if (cached) {
            presentK = k32;
            presentV = v32;
        } else {
            presentK = Tensor(DataType::Float, {batch, heads_, total, headSize});
            presentV = Tensor(DataType::Float, {batch, heads_, total, vHeadSize});
            const Tensor pastK32 = pastKey ? asFloat(*pastKey) : Tensor();
            const Tensor pastV32 = pastValue ? asFloat(*pastValue) : Tensor();
            float* pk = presentK.data<float>();
            float* pv = presentV.data<float>();
            const float* kIn = k32.data<float>();
            const float* vIn = v32.data<float>();
            ctx.pool().parallelFor(
                batch * heads_, static_cast<double>(total * (headSize + vHeadSize)),
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t item = begin; item < end; ++item) {
                        const std::int64_t b = item / heads_, h = item % heads_;
                        float* kDst = pk + item * total * headSize;
                        float* vDst = pv + item * total * vHeadSize;
                        if (past > 0) {
                            copyRows(kDst, pastK32.data<float>() + item * past * headSize, headSize,
                                     past, headSize, nullptr);
                            copyRows(vDst, pastV32.data<float>() + item * past * vHeadSize,
                                     vHeadSize, past, vHeadSize, nullptr);
                        }
                        copyRows(kDst + past * headSize, kIn + b * kvSeq * hidden + h * headSize,
                                 hidden, kvSeq, headSize,
                                 biasData ? biasData + hidden + h * headSize : nullptr);
                        copyRows(vDst + past * vHeadSize, vIn + b * kvSeq * vHidden + h * vHeadSize,
                                 vHidden, kvSeq, vHeadSize,
                                 biasData ? biasData + 2 * hidden + h * vHeadSize : nullptr);
                    }
                });
        }

        AttentionCoreProblem p;
        p.batch = batch;
        p.heads = p.kvHeads = heads_;
        p.queries = seq;
        p.headSize = headSize;
        p.vHeadSize = vHeadSize;
        p.q = HeadRows{qData, seq * hidden, headSize, hidden};
        p.k =
            HeadRows{presentK.data<float>(), heads_ * total * headSize, total * headSize, headSize};
        p.v = HeadRows{presentV.data<float>(), heads_ * total * vHeadSize, total * vHeadSize,
                       vHeadSize};
        Tensor y = bindOutputAndKeys(p, batch, seq, vHidden, vHeadSize, headSize, scale_, total,
                                     past, causal_);
        const AdditiveMask mask =
            padding
                ? buildPaddingMask(*padding, ValueName{"MultiHeadAttention", "key_padding_mask"},
                                   batch, seq, total, past, filter_, false)
                : AdditiveMask{};
        setMask(p, mask);
        const Tensor attentionBias32 = attentionBias ? asFloat(*attentionBias) : Tensor();
        if (attentionBias) {
            require(attentionBias->dtype() == type,
                    [&] { return msg("attention_bias must have the query's type"); });
            setAttentionBias(p, attentionBias32, *attentionBias,
                             ValueName{"MultiHeadAttention", "attention_bias"}, total);
        }
        Tensor qk;
        if (outputs.size() > 3) {
            qk = Tensor(DataType::Float, {batch, heads_, seq, total});
            p.qk = qk.data<float>();
            p.qkMode = 1;
            p.qkColumns = total;
            p.qkOutside = std::numeric_limits<float>::lowest();
        }
        runAttentionCore(ctx, p);

        outputs[0] = Value(narrowTo(y, type));
        if (outputs.size() > 1) outputs[1] = Value(narrowTo(presentK, type));
        if (outputs.size() > 2) outputs[2] = Value(narrowTo(presentV, type));
        if (outputs.size() > 3) outputs[3] = Value(narrowTo(qk, type));
    }

  private:
    static std::string msg(const std::string& text) { return "MultiHeadAttention: " + text; }
    std::int64_t heads_;
    bool causal_;
    float filter_, scale_;
};

// y [B, S, N] = x [B, S, K] x w [K, N] (+ bias): oneDNN when it takes the problem, else Eigen
// over blocks of rows.
void projectInto(KernelContext& ctx, DnnlMatMul& dnnl, const Tensor& x, const Tensor& w,
                 const float* bias, Tensor& y) {
    if (dnnl.run(x, w, bias, MatMulActivation::None, y)) return;
    const std::int64_t rows = x.dim(0) * x.dim(1), k = x.dim(2), n = w.dim(1);
    const float* a = x.data<float>();
    const float* b = w.data<float>();
    float* c = y.data<float>();
    const std::int64_t block = 16;
    ctx.pool().parallelFor((rows + block - 1) / block, 2.0 * static_cast<double>(block * k * n),
                           [&](std::int64_t begin, std::int64_t end) {
                               for (std::int64_t i = begin; i < end; ++i) {
                                   const std::int64_t r0 = i * block;
                                   denseRows(a + r0 * k, b, bias, c + r0 * n,
                                             std::min(block, rows - r0), k, n);
                               }
                           });
}

// What Attention and QAttention share: the attributes, the split of the projection's width into
// Q, K and V, and everything after the projection (past/present, masks, the core).
class FusedAttentionKernel : public Kernel {
  public:
    FusedAttentionKernel(const NodeInfo& node, const char* opType)
        : op_(opType),
          heads_(node.getInt("num_heads")),
          causal_(node.getInt("unidirectional", 0) != 0),
          shareBuffer_(node.getInt("past_present_share_buffer", 0) != 0),
          filter_(node.getFloat("mask_filter_value", -10000.0f)),
          scale_(node.getFloat("scale", 0.0f)),
          sizes_(node.getInts("qkv_hidden_sizes")) {
        require(heads_ > 0,
                [&] { return msg("num_heads must be positive, got " + std::to_string(heads_)); });
        require(std::isfinite(scale_) && scale_ >= 0, [&] {
            return msg("scale must be finite and not negative (0 = 1/sqrt(head_size))");
        });
        require(node.getInt("do_rotary", 0) == 0, [&] {
            return msg(
                "do_rotary is not supported, as in ONNX Runtime's CPU kernel (fuse the model "
                "with MultiHeadAttention and RotaryEmbedding instead)");
        });
        if (!sizes_.empty()) {
            require(sizes_.size() == 3 && sizes_[0] > 0 && sizes_[1] == sizes_[0] && sizes_[2] > 0,
                    [&] {
                        return msg(
                            "qkv_hidden_sizes must be three positive sizes with Q's equal to K's");
                    });
            for (std::int64_t size : sizes_)
                require(size % heads_ == 0, [&] {
                    return msg("qkv_hidden_sizes entry " + std::to_string(size) +
                               " does not split into " + std::to_string(heads_) + " heads");
                });
        }
    }

  protected:
    std::string msg(const std::string& text) const { return std::string(op_) + ": " + text; }

    // The widths of Q, K and V in a projection of `width` columns.
    std::pair<std::int64_t, std::int64_t> splitWidth(std::int64_t width) const {
        if (sizes_.empty()) {
            require(width % 3 == 0 && width > 0, [&] {
                return msg("weights width " + std::to_string(width) +
                           " is not 3 * hidden (give qkv_hidden_sizes for unequal sizes)");
            });
            require((width / 3) % heads_ == 0, [&] {
                return msg("hidden size " + std::to_string(width / 3) + " does not split into " +
                           std::to_string(heads_) + " heads (num_heads)");
            });
            return {width / 3, width / 3};
        }
        const std::int64_t sum =
            checkedSum(checkedSum(sizes_[0], sizes_[0], ValueName{op_, "qkv_hidden_sizes"}),
                       sizes_[2], ValueName{op_, "qkv_hidden_sizes"});
        require(sum == width, [&] {
            return msg("qkv_hidden_sizes add up to " + std::to_string(sum) + " but weights are " +
                       std::to_string(width) + " wide");
        });
        return {sizes_[0], sizes_[2]};
    }

    // Attention on the projected qkv [B, S, 2 * qHidden + vHidden] (float); `type` is the type
    // of past and of the outputs.
    void attend(KernelContext& ctx, const Tensor& qkv, std::int64_t qHidden, std::int64_t vHidden,
                const Tensor* maskIndex, const Tensor* pastInput, const Tensor* attentionBias,
                const Tensor* pastLength, DataType type, std::vector<Value>& outputs) {
        const std::int64_t batch = qkv.dim(0), seq = qkv.dim(1), width = qkv.dim(2);
        const std::int64_t headSize = qHidden / heads_, vHeadSize = vHidden / heads_;
        requireCountable(
            {{maskIndex, "mask_index"}, {pastInput, "past"}, {attentionBias, "attention_bias"}},
            op_);
        // Past rows: [2, B, N, P, H]; with a shared buffer [2, B, N, max, H] of which
        // past_sequence_length rows are valid.
        std::int64_t past = 0, bufferRows = 0;
        if (pastInput) {
            require(headSize == vHeadSize,
                    [&] { return msg("past needs equal Q, K and V hidden sizes"); });
            require(pastInput->dtype() == type && pastInput->rank() == 5 &&
                        pastInput->dim(0) == 2 && pastInput->dim(1) == batch &&
                        pastInput->dim(2) == heads_ && pastInput->dim(4) == headSize,
                    [&] {
                        return msg("past must be [2, " + std::to_string(batch) + ", " +
                                   std::to_string(heads_) + ", past, " + std::to_string(headSize) +
                                   "], got " + shapeToString(pastInput->shape()));
                    });
            bufferRows = pastInput->dim(3);
            past = bufferRows;
        }
        if (shareBuffer_ && pastInput) {
            require(pastLength && isInteger(pastLength->dtype()) && pastLength->numel() == 1, [&] {
                return msg("past_present_share_buffer needs past_sequence_length, one integer");
            });
            past = pastLength->valueAsInt64(0);
            require(past >= 0 && past <= bufferRows - seq, [&] {
                return msg("past_sequence_length " + std::to_string(past) + " plus " +
                           std::to_string(seq) + " new rows exceeds the shared buffer of " +
                           std::to_string(bufferRows));
            });
        }
        const std::int64_t total = checkedSum(past, seq, ValueName{op_, "past + sequence length"});
        const std::int64_t presentRows = shareBuffer_ && pastInput ? bufferRows : total;

        const float* qkvData = qkv.data<float>();
        const std::int64_t rowStride = width, batchStride = seq * width;

        AttentionCoreProblem p;
        p.batch = batch;
        p.heads = p.kvHeads = heads_;
        p.queries = seq;
        p.headSize = headSize;
        p.vHeadSize = vHeadSize;
        p.q = HeadRows{qkvData, batchStride, headSize, rowStride};
        const bool wantPresent = pastInput || outputs.size() > 1;
        require(!wantPresent || headSize == vHeadSize,
                [&] { return msg("present needs equal Q, K and V hidden sizes"); });
        Tensor present;
        if (wantPresent) {
            present = Tensor(DataType::Float, {2, batch, heads_, presentRows, headSize});
            float* pr = present.data<float>();
            const Tensor past32 = pastInput ? asFloat(*pastInput) : Tensor();
            const std::int64_t half = batch * heads_ * presentRows * headSize;
            ctx.pool().parallelFor(
                present.numel() == 0 ? 0 : 2 * batch * heads_,
                static_cast<double>(presentRows * headSize),
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t item = begin; item < end; ++item) {
                        const std::int64_t kv = item / (batch * heads_);
                        const std::int64_t b = (item / heads_) % batch, h = item % heads_;
                        float* dst = present.data<float>() + item * presentRows * headSize;
                        if (pastInput)  // the whole buffer: rows past a shared buffer's valid
                                        // ones stay as they were
                            std::memcpy(dst, past32.data<float>() + item * bufferRows * headSize,
                                        static_cast<std::size_t>(std::min(bufferRows, presentRows) *
                                                                 headSize) *
                                            sizeof(float));
                        copyRows(dst + past * headSize,
                                 qkvData + b * batchStride + (kv + 1) * qHidden + h * headSize,
                                 rowStride, seq, headSize, nullptr);
                    }
                });
            p.k = HeadRows{pr, heads_ * presentRows * headSize, presentRows * headSize, headSize};
            p.v = HeadRows{pr + half, heads_ * presentRows * headSize, presentRows * headSize,
                           headSize};
        } else {
            p.k = HeadRows{qkvData + qHidden, batchStride, headSize, rowStride};
            p.v = HeadRows{qkvData + 2 * qHidden, batchStride, vHeadSize, rowStride};
        }
        Tensor y = bindOutputAndKeys(p, batch, seq, vHidden, vHeadSize, headSize, scale_, total,
                                     past, causal_);
        const AdditiveMask mask = maskIndex
                                      ? buildPaddingMask(*maskIndex, ValueName{op_, "mask_index"},
                                                         batch, seq, total, past, filter_, true)
                                      : AdditiveMask{};
        setMask(p, mask);
        const Tensor attentionBias32 = attentionBias ? asFloat(*attentionBias) : Tensor();
        if (attentionBias) {
            require(attentionBias->dtype() == type,
                    [&] { return msg("attention_bias must have the input's type"); });
            setAttentionBias(p, attentionBias32, *attentionBias, ValueName{op_, "attention_bias"},
                             total);
        }
        runAttentionCore(ctx, p);

        outputs[0] = Value(narrowTo(y, type));
        if (outputs.size() > 1 && present.defined()) outputs[1] = Value(narrowTo(present, type));
    }

    const char* op_;
    std::int64_t heads_;
    bool causal_, shareBuffer_;
    float filter_, scale_;
    std::vector<std::int64_t> sizes_;
};

// Attention, and the com.onnxlens Attention the optimizer's pack-matmul-weights pass writes: the
// same operator with its constant float weights in PackedMatMul's packed layout
// (PackedMatMulWeights.h; attributes k and n give their [K, N]), so that the projection runs on
// oneDNN's 1x1 convolution on weights read in place, as PackedMatMul does. On AVX-512 oneDNN's
// matmul on the plain weights took 3.36 ms for BERT-base's [128 x 768] x [768 x 2304], the packed
// product 2.76 ms (1 thread, stand-alone).
class MsAttentionKernel final : public FusedAttentionKernel {
  public:
    explicit MsAttentionKernel(const NodeInfo& node)
        : FusedAttentionKernel(node, "Attention"),
          packedK_(node.domain() == kOnnxlensDomain ? node.getInt("k") : 0),
          packedN_(node.domain() == kOnnxlensDomain ? node.getInt("n") : 0) {
        if (node.domain() == kOnnxlensDomain)
            require(packedK_ >= 1 && packedN_ >= 1,
                    [&] { return msg("k and n must be positive"); });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const Tensor& weights = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        requireCountable({{&input, "input"}, {&weights, "weights"}, {bias, "bias"}}, "Attention");
        requireAttentionFloat(input, ValueName{op_, "input"});
        const DataType type = input.dtype();
        require(input.rank() == 3, [&] {
            return msg("input must be 3-D [batch, sequence, input_hidden], got " +
                       shapeToString(input.shape()));
        });
        const std::int64_t batch = input.dim(0), seq = input.dim(1), inHidden = input.dim(2);
        const bool packed = packedK_ > 0;
        if (packed)
            require(type == DataType::Float && weights.dtype() == DataType::Float &&
                        packedK_ == inHidden &&
                        packedMatMulBlocksOf(weights.shape(), packedK_, packedN_).has_value(),
                    [&] {
                        return msg("the packed weights " + shapeToString(weights.shape()) +
                                   " do not hold K = " + std::to_string(inHidden) +
                                   ", N = " + std::to_string(packedN_) + " for a float input");
                    });
        else
            require(weights.dtype() == type && weights.rank() == 2 && weights.dim(0) == inHidden,
                    [&] {
                        return msg("weights must be [" + std::to_string(inHidden) +
                                   ", q_hidden + k_hidden + v_hidden] of the input's type, got " +
                                   shapeToString(weights.shape()));
                    });
        const std::int64_t width = packed ? packedN_ : weights.dim(1);
        const auto [qHidden, vHidden] = splitWidth(width);
        if (bias)
            require(bias->dtype() == type && bias->rank() == 1 && bias->dim(0) == width, [&] {
                return msg("bias must be [" + std::to_string(width) + "], got " +
                           shapeToString(bias->shape()));
            });
        // Q, K, V = input x weights + bias: [B, S, width].
        const Tensor in32 = asFloat(input);
        const Tensor bias32 = bias ? asFloat(*bias) : Tensor();
        const float* biasData = bias ? bias32.data<float>() : nullptr;
        Tensor qkv(DataType::Float, {batch, seq, width});
        if (!packed) {
            projectInto(ctx, dnnl_, in32, asFloat(weights), biasData, qkv);
        } else if (batch * seq > 0 &&
                   !packedDnnl_.run(in32.data<float>(), batch * seq, inHidden, width, weights,
                                    biasData, MatMulActivation::None, qkv.data<float>(),
                                    &ctx.pool())) {
            projectInto(ctx, dnnl_, in32, unpacked_.of(weights, inHidden, width), biasData, qkv);
        }
        attend(ctx, qkv, qHidden, vHidden, optionalInputTensor(inputs, 3),
               optionalInputTensor(inputs, 4), optionalInputTensor(inputs, 5),
               optionalInputTensor(inputs, 6), type, outputs);
    }

  private:
    DnnlMatMul dnnl_;
    std::int64_t packedK_, packedN_;  // 0 for com.microsoft Attention's plain weights
    DnnlPackedMatMul packedDnnl_;
    UnpackedMatMulWeights unpacked_;  // without oneDNN
};

// QAttention: Attention whose input and weights are 8-bit integers with scales and zero points
// (per tensor; the weight's also per column). The product runs on the dequantized values in
// float (x - x_zero) * x_scale times (w - w_zero) * w_scale, then bias; past, present and the
// outputs are float.
class QAttentionKernel final : public FusedAttentionKernel {
  public:
    explicit QAttentionKernel(const NodeInfo& node) : FusedAttentionKernel(node, "QAttention") {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const Tensor& weights = inputTensor(inputs, 1);
        const Tensor& bias = inputTensor(inputs, 2);
        const Tensor& inputScale = inputTensor(inputs, 3);
        const Tensor& weightScale = inputTensor(inputs, 4);
        const Tensor* inputZero = optionalInputTensor(inputs, 6);
        const Tensor* weightZero = optionalInputTensor(inputs, 7);
        requireCountable({{&input, "input"}, {&weights, "weight"}, {&bias, "bias"}}, "QAttention");
        auto eightBit = [](DataType t) { return t == DataType::UInt8 || t == DataType::Int8; };
        require(eightBit(input.dtype()) && eightBit(weights.dtype()), [&] {
            return msg("input and weight must be uint8 or int8, got " +
                       std::string(dataTypeName(input.dtype())) + " and " +
                       dataTypeName(weights.dtype()));
        });
        require(input.rank() == 3, [&] {
            return msg("input must be 3-D [batch, sequence, input_hidden], got " +
                       shapeToString(input.shape()));
        });
        const std::int64_t batch = input.dim(0), seq = input.dim(1), inHidden = input.dim(2);
        require(weights.rank() == 2 && weights.dim(0) == inHidden, [&] {
            return msg("weight must be [" + std::to_string(inHidden) + ", 3 * hidden], got " +
                       shapeToString(weights.shape()));
        });
        const std::int64_t width = weights.dim(1);
        const auto [qHidden, vHidden] = splitWidth(width);
        requireAttentionFloat(bias, ValueName{op_, "bias"});
        const DataType type = bias.dtype();
        require(bias.rank() == 1 && bias.dim(0) == width, [&] {
            return msg("bias must be [" + std::to_string(width) + "], got " +
                       shapeToString(bias.shape()));
        });
        require(inputScale.dtype() == type && inputScale.numel() == 1,
                [&] { return msg("input_scale must be one value of the bias's type"); });
        require(weightScale.dtype() == type &&
                    (weightScale.numel() == 1 ||
                     (weightScale.rank() == 1 && weightScale.dim(0) == width)),
                [&] {
                    return msg("weight_scale must be one value or [" + std::to_string(width) + "]");
                });
        if (inputZero)
            require(inputZero->dtype() == input.dtype() && inputZero->numel() == 1,
                    [&] { return msg("input_zero_point must be one value of the input's type"); });
        if (weightZero)
            require(weightZero->dtype() == weights.dtype() &&
                        (weightZero->numel() == 1 ||
                         (weightZero->rank() == 1 && weightZero->dim(0) == width)),
                    [&] {
                        return msg("weight_zero_point must be one value or [" +
                                   std::to_string(width) + "] of the weight's type");
                    });

        // Dequantized input [B, S, Din] and weights [Din, width].
        const double xScale = inputScale.valueAsDouble(0);
        const double xZero = inputZero ? inputZero->valueAsDouble(0) : 0.0;
        Tensor x(DataType::Float, input.shape());
        float* xd = x.data<float>();
        for (std::int64_t i = 0; i < input.numel(); ++i)
            xd[i] = static_cast<float>((input.valueAsDouble(i) - xZero) * xScale);
        const Tensor scales = asFloat(weightScale);
        const Tensor zeros = weightZero ? weightZero->castTo(DataType::Float) : Tensor();
        Tensor w(DataType::Float, weights.shape());
        float* wd = w.data<float>();
        const float* sc = scales.data<float>();
        const float* zp = weightZero ? zeros.data<float>() : nullptr;
        const bool perColumnScale = weightScale.numel() != 1,
                   perColumnZero = weightZero && weightZero->numel() != 1;
        const Tensor wFloat = weights.castTo(DataType::Float);
        const float* wq = wFloat.data<float>();
        for (std::int64_t r = 0; r < inHidden; ++r)
            for (std::int64_t c = 0; c < width; ++c) {
                const float zero = zp ? zp[perColumnZero ? c : 0] : 0.0f;
                wd[r * width + c] = (wq[r * width + c] - zero) * sc[perColumnScale ? c : 0];
            }
        const Tensor bias32 = asFloat(bias);
        Tensor qkv(DataType::Float, {batch, seq, width});
        projectInto(ctx, dnnl_, x, w, bias32.data<float>(), qkv);
        attend(ctx, qkv, qHidden, vHidden, optionalInputTensor(inputs, 5),
               optionalInputTensor(inputs, 8), nullptr, nullptr, type, outputs);
    }

  private:
    DnnlMatMul dnnl_;
};
}  // namespace

void registerMsAttentionOps(KernelRegistry& registry) {
    registry.add<MultiHeadAttentionKernel>("MultiHeadAttention", 1, kLatestOpset, kDomain);
    registry.add<MsAttentionKernel>("Attention", 1, kLatestOpset, kDomain);
    // The same with packed weights (the optimizer's pack-matmul-weights pass).
    registry.add<MsAttentionKernel>("Attention", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<QAttentionKernel>("QAttention", 1, kLatestOpset, kDomain);
}

}  // namespace onnxlens::engine::ops
