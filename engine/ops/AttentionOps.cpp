// The transformer operators of opset 23: RotaryEmbedding and Attention. Both compute in double
// per (batch, head) row; they exist so that opset-23 exports run at all (exporters fuse these
// from MatMul/Softmax chains that the engine runs fast on its own).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "OpFamilies.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

namespace {

std::vector<double> doublesOf(const Tensor& t) {
    const Tensor d = t.castTo(DataType::Double);
    const double* p = d.data<double>();
    return std::vector<double>(p, p + d.numel());
}

// A [batch, heads, sequence, headSize] view of a 4-D tensor, or of a 3-D [batch, sequence,
// heads * headSize] one (the layout both operators accept).
struct HeadLayout {
    std::int64_t batch = 0, heads = 0, sequence = 0, headSize = 0;
    bool packed = false;  // 3-D input

    static HeadLayout of(const Tensor& t, std::int64_t heads, const std::string& what) {
        HeadLayout l;
        if (t.rank() == 4) {
            l.batch = t.dim(0);
            l.heads = t.dim(1);
            l.sequence = t.dim(2);
            l.headSize = t.dim(3);
            return l;
        }
        require(t.rank() == 3,
                [&] { return what + " must be 3-D or 4-D, got " + shapeToString(t.shape()); });
        require(heads > 0,
                [&] { return what + " is 3-D: the head count attribute must be positive"; });
        require(t.dim(2) % heads == 0, [&] {
            return what + ": hidden size " + std::to_string(t.dim(2)) + " does not split into " +
                   std::to_string(heads) + " heads";
        });
        l.packed = true;
        l.batch = t.dim(0);
        l.sequence = t.dim(1);
        l.heads = heads;
        l.headSize = t.dim(2) / heads;
        return l;
    }

    // Offset of element (b, h, s, 0) in the tensor's own layout, and the step between
    // consecutive s.
    std::int64_t at(std::int64_t b, std::int64_t h, std::int64_t s) const {
        if (packed) return ((b * sequence + s) * heads + h) * headSize;
        return ((b * heads + h) * sequence + s) * headSize;
    }
};

class RotaryEmbeddingKernel final : public Kernel {
  public:
    explicit RotaryEmbeddingKernel(const NodeInfo& node)
        : interleaved_(node.getInt("interleaved", 0) != 0),
          heads_(node.getInt("num_heads", 0)),
          rotaryDim_(node.getInt("rotary_embedding_dim", 0)) {
        require(heads_ >= 0 && rotaryDim_ >= 0,
                "RotaryEmbedding: num_heads and rotary_embedding_dim must not be negative");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& cosCache = inputTensor(inputs, 1);
        const Tensor& sinCache = inputTensor(inputs, 2);
        const Tensor* positions = optionalInputTensor(inputs, 3);
        require(isFloatingPoint(x.dtype()), "RotaryEmbedding: input must be floating point");
        const HeadLayout l = HeadLayout::of(x, heads_, "RotaryEmbedding input");
        const std::int64_t rotary = rotaryDim_ > 0 ? rotaryDim_ : l.headSize;
        require(rotary % 2 == 0 && rotary <= l.headSize, [&] {
            return "RotaryEmbedding: rotary dim " + std::to_string(rotary) +
                   " must be even and at most the head size " + std::to_string(l.headSize);
        });
        const std::int64_t half = rotary / 2;
        require(cosCache.shape() == sinCache.shape(),
                "RotaryEmbedding: cos_cache and sin_cache shapes differ");
        std::vector<std::int64_t> ids;
        if (positions) {
            require(cosCache.rank() == 2 && cosCache.dim(1) == half, [&] {
                return "RotaryEmbedding: with position_ids the caches must be [max_position, " +
                       std::to_string(half) + "], got " + shapeToString(cosCache.shape());
            });
            require(positions->rank() == 2 && positions->dim(0) == l.batch &&
                        positions->dim(1) == l.sequence,
                    "RotaryEmbedding: position_ids must be [batch, sequence]");
            ids = positions->toInt64Vector();
            for (auto id : ids)
                require(id >= 0 && id < cosCache.dim(0), [&] {
                    return "RotaryEmbedding: position id " + std::to_string(id) +
                           " is outside the cache of " + std::to_string(cosCache.dim(0));
                });
        } else {
            require(cosCache.rank() == 3 && cosCache.dim(0) == l.batch &&
                        cosCache.dim(1) == l.sequence && cosCache.dim(2) == half,
                    [&] {
                        return "RotaryEmbedding: without position_ids the caches must be [batch, "
                               "sequence, " +
                               std::to_string(half) + "], got " + shapeToString(cosCache.shape());
                    });
        }
        const std::vector<double> in = doublesOf(x), cosv = doublesOf(cosCache),
                                  sinv = doublesOf(sinCache);
        std::vector<double> out(in);
        for (std::int64_t b = 0; b < l.batch; ++b)
            for (std::int64_t s = 0; s < l.sequence; ++s) {
                const std::int64_t row = positions
                                             ? ids[static_cast<std::size_t>(b * l.sequence + s)]
                                             : b * l.sequence + s;
                const double* c = cosv.data() + row * half;
                const double* sn = sinv.data() + row * half;
                for (std::int64_t h = 0; h < l.heads; ++h) {
                    const std::int64_t base = l.at(b, h, s);
                    for (std::int64_t i = 0; i < half; ++i) {
                        const std::int64_t first = interleaved_ ? base + 2 * i : base + i;
                        const std::int64_t second =
                            interleaved_ ? base + 2 * i + 1 : base + i + half;
                        const double x1 = in[static_cast<std::size_t>(first)];
                        const double x2 = in[static_cast<std::size_t>(second)];
                        out[static_cast<std::size_t>(first)] = c[i] * x1 - sn[i] * x2;
                        out[static_cast<std::size_t>(second)] = sn[i] * x1 + c[i] * x2;
                    }
                }
            }
        outputs[0] = Value(Tensor::fromVector<double>(x.shape(), out).castTo(x.dtype()));
    }

  private:
    bool interleaved_;
    std::int64_t heads_, rotaryDim_;
};

// Attention (opsets 23 and 24): softmax(softcap(Q K^T * scale) + mask) V per head, heads of Q
// sharing K/V heads in groups (q_num_heads a multiple of kv_num_heads). past_key/past_value are
// prepended along the sequence and returned as present_key/present_value. Causal masking with a
// past (whose alignment the opset-23 text leaves open) is refused at opset 23 rather than
// guessed. Opset 24: the input nonpad_kv_seqlen [batch] masks keys j >= nonpad_kv_seqlen[b];
// causal masking is bottom-right aligned (query i sees keys j <= i + offset, offset the past
// length, or nonpad_kv_seqlen[b] - q_seq without a past); attn_mask may be shorter than the total
// sequence (the keys beyond it are masked), as the ONNX reference does.
class AttentionKernel final : public Kernel {
  public:
    explicit AttentionKernel(const NodeInfo& node)
        : opset_(node.opsetVersion()),
          causal_(node.getInt("is_causal", 0) != 0),
          qHeads_(node.getInt("q_num_heads", 0)),
          kvHeads_(node.getInt("kv_num_heads", 0)),
          qkOutputMode_(node.getInt("qk_matmul_output_mode", 0)),
          scale_(node.hasAttribute("scale") ? std::optional<double>(node.getFloat("scale"))
                                            : std::nullopt),
          softcap_(node.getFloat("softcap", 0.0f)) {
        require(qkOutputMode_ >= 0 && qkOutputMode_ <= 3,
                "Attention: qk_matmul_output_mode must be 0 to 3");
        require(softcap_ >= 0, "Attention: softcap must not be negative");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& q = inputTensor(inputs, 0);
        const Tensor& k = inputTensor(inputs, 1);
        const Tensor& v = inputTensor(inputs, 2);
        const Tensor* mask = optionalInputTensor(inputs, 3);
        const Tensor* pastKey = optionalInputTensor(inputs, 4);
        const Tensor* pastValue = optionalInputTensor(inputs, 5);
        const Tensor* nonpad = opset_ >= 24 ? optionalInputTensor(inputs, 6) : nullptr;
        require(isFloatingPoint(q.dtype()), "Attention: Q must be floating point");
        require(q.rank() == k.rank() && k.rank() == v.rank(),
                "Attention: Q, K and V must all be 3-D or all 4-D");
        const HeadLayout lq = HeadLayout::of(q, qHeads_, "Attention Q");
        const HeadLayout lk = HeadLayout::of(k, kvHeads_, "Attention K");
        const HeadLayout lv = HeadLayout::of(v, kvHeads_, "Attention V");
        require(lq.batch == lk.batch && lk.batch == lv.batch, "Attention: batch sizes differ");
        require(lk.heads == lv.heads && lk.sequence == lv.sequence,
                "Attention: K and V disagree on heads or sequence length");
        require(lq.headSize == lk.headSize, "Attention: Q and K head sizes differ");
        require(lk.heads > 0 && lq.heads % lk.heads == 0, [&] {
            return "Attention: " + std::to_string(lq.heads) + " query heads do not group over " +
                   std::to_string(lk.heads) + " key/value heads";
        });
        require((pastKey == nullptr) == (pastValue == nullptr),
                "Attention: past_key and past_value come together");
        const std::int64_t past = pastKey ? pastKey->dim(2) : 0;
        if (pastKey) {
            require(pastKey->rank() == 4 && pastKey->dim(0) == lk.batch &&
                        pastKey->dim(1) == lk.heads && pastKey->dim(3) == lk.headSize,
                    "Attention: past_key must be [batch, kv_heads, past, head_size]");
            require(pastValue->rank() == 4 && pastValue->dim(0) == lv.batch &&
                        pastValue->dim(1) == lv.heads && pastValue->dim(2) == past &&
                        pastValue->dim(3) == lv.headSize,
                    "Attention: past_value must be [batch, kv_heads, past, v_head_size]");
            require(!causal_ || opset_ >= 24,
                    "Attention: is_causal with past_key/past_value is not supported at opset 23");
        }
        const std::int64_t batch = lq.batch, qSeq = lq.sequence, total = past + lk.sequence;
        // Opset 24: valid keys per batch (nonpad_kv_seqlen) and the causal offset per batch.
        std::vector<std::int64_t> validKeys(static_cast<std::size_t>(batch), total);
        std::vector<std::int64_t> causalOffset(static_cast<std::size_t>(batch), 0);
        if (nonpad) {
            require(isInteger(nonpad->dtype()) && nonpad->numel() == batch, [&] {
                return "Attention: nonpad_kv_seqlen must hold one integer per batch, got " +
                       std::string(dataTypeName(nonpad->dtype())) + " " +
                       shapeToString(nonpad->shape());
            });
            for (std::int64_t b = 0; b < batch; ++b)
                validKeys[static_cast<std::size_t>(b)] = nonpad->valueAsInt64(b);
        }
        if (opset_ >= 24)
            for (std::int64_t b = 0; b < batch; ++b)
                causalOffset[static_cast<std::size_t>(b)] =
                    pastKey  ? past
                    : nonpad ? std::clamp<std::int64_t>(validKeys[static_cast<std::size_t>(b)],
                                                        -total, total) -
                                   qSeq
                             : 0;
        const std::int64_t headSize = lq.headSize, vHead = lv.headSize;
        const double scale = scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(headSize));

        // present_key/value [batch, kv_heads, total, size] in double.
        auto present = [&](const Tensor* pastTensor, const Tensor& current, const HeadLayout& l) {
            std::vector<double> all(static_cast<std::size_t>(batch * l.heads * total * l.headSize));
            const std::vector<double> cur = doublesOf(current);
            const std::vector<double> old =
                pastTensor ? doublesOf(*pastTensor) : std::vector<double>();
            for (std::int64_t b = 0; b < batch; ++b)
                for (std::int64_t h = 0; h < l.heads; ++h)
                    for (std::int64_t s = 0; s < total; ++s) {
                        double* dst = all.data() + ((b * l.heads + h) * total + s) * l.headSize;
                        const double* src =
                            s < past ? old.data() + ((b * l.heads + h) * past + s) * l.headSize
                                     : cur.data() + l.at(b, h, s - past);
                        std::copy(src, src + l.headSize, dst);
                    }
            return all;
        };
        const std::vector<double> keys = present(pastKey, k, lk);
        const std::vector<double> values = present(pastValue, v, lv);
        const std::vector<double> queries = doublesOf(q);

        // The mask broadcast (numpy-style, from the right) to [batch, q_heads, q_seq, total].
        std::vector<double> maskValues;
        std::vector<std::int64_t> maskStrides(4, 0);
        bool boolMask = false;
        std::int64_t maskKeys = total;  // keys the mask covers; opset 24 masks the ones beyond
        if (mask) {
            require(mask->rank() >= 2 && mask->rank() <= 4, [&] {
                return "Attention: attn_mask must have rank 2 to 4, got " +
                       shapeToString(mask->shape());
            });
            const std::int64_t last = mask->dim(mask->rank() - 1);
            require(last == total || (opset_ >= 24 && last < total), [&] {
                return "Attention: attn_mask's last dim must be the total sequence length " +
                       std::to_string(total) + (opset_ >= 24 ? " or less" : "") + ", got " +
                       shapeToString(mask->shape());
            });
            if (opset_ >= 24) maskKeys = last;
            boolMask = mask->dtype() == DataType::Bool;
            maskValues = doublesOf(boolMask ? mask->castTo(DataType::Double) : *mask);
            const std::int64_t full[4] = {batch, lq.heads, qSeq, maskKeys};
            std::int64_t stride = 1;
            for (std::int64_t d = 3, m = mask->rank() - 1; m >= 0; --d, --m) {
                const std::int64_t size = mask->dim(m);
                require(size == full[d] || size == 1, [&] {
                    return "Attention: attn_mask " + shapeToString(mask->shape()) +
                           " does not broadcast to [batch, heads, q_seq, total_seq]";
                });
                maskStrides[static_cast<std::size_t>(d)] = size == 1 ? 0 : stride;
                stride *= size;
            }
        }

        const std::int64_t group = lq.heads / lk.heads;
        std::vector<double> y(static_cast<std::size_t>(batch * lq.heads * qSeq * vHead));
        std::vector<double> qkOut;
        const bool wantQk = outputs.size() > 3;
        if (wantQk) qkOut.assign(static_cast<std::size_t>(batch * lq.heads * qSeq * total), 0.0);
        const double minusInfinity = -std::numeric_limits<double>::infinity();
        ctx.pool().parallelFor(
            batch * lq.heads, static_cast<double>(qSeq * total * (headSize + vHead)),
            [&](std::int64_t begin, std::int64_t end) {
                std::vector<double> scores(static_cast<std::size_t>(total));
                for (std::int64_t bh = begin; bh < end; ++bh) {
                    const std::int64_t b = bh / lq.heads, h = bh % lq.heads, kvh = h / group;
                    const double* kBase = keys.data() + (b * lk.heads + kvh) * total * headSize;
                    const double* vBase = values.data() + (b * lv.heads + kvh) * total * vHead;
                    for (std::int64_t i = 0; i < qSeq; ++i) {
                        const double* qRow = queries.data() + lq.at(b, h, i);
                        double* qk = wantQk ? qkOut.data() + ((b * lq.heads + h) * qSeq + i) * total
                                            : nullptr;
                        for (std::int64_t j = 0; j < total; ++j) {
                            double dot = 0;
                            const double* kRow = kBase + j * headSize;
                            for (std::int64_t d = 0; d < headSize; ++d) dot += qRow[d] * kRow[d];
                            const double raw = dot * scale;
                            if (qk && qkOutputMode_ == 0) qk[j] = raw;
                            // The softcap bends the scores before the mask (as ONNX Runtime does):
                            // capping after it would turn a -inf (masked) score into -softcap.
                            const double capped =
                                softcap_ > 0 ? softcap_ * std::tanh(raw / softcap_) : raw;
                            double bias = 0;
                            if (mask && j < maskKeys) {
                                const double m = maskValues[static_cast<std::size_t>(
                                    b * maskStrides[0] + h * maskStrides[1] + i * maskStrides[2] +
                                    j * maskStrides[3])];
                                bias = boolMask ? (m != 0 ? 0.0 : minusInfinity) : m;
                            } else if (mask) {
                                bias = minusInfinity;
                            }
                            if (causal_ && j > i + causalOffset[static_cast<std::size_t>(b)])
                                bias = minusInfinity;
                            if (j >= validKeys[static_cast<std::size_t>(b)]) bias = minusInfinity;
                            if (qk && qkOutputMode_ == 1) qk[j] = raw + bias;
                            const double score = capped + bias;
                            if (qk && qkOutputMode_ == 2) qk[j] = score;
                            scores[static_cast<std::size_t>(j)] = score;
                        }
                        double highest = minusInfinity;
                        for (double s : scores) highest = std::max(highest, s);
                        double sum = 0;
                        for (double& s : scores) {
                            // A row with every key masked attends to nothing (zeros, not NaN).
                            s = highest == minusInfinity ? 0.0 : std::exp(s - highest);
                            sum += s;
                        }
                        for (double& s : scores) s = sum > 0 ? s / sum : 0.0;
                        if (qk && qkOutputMode_ == 3) std::copy(scores.begin(), scores.end(), qk);
                        double* yRow = y.data() + ((b * lq.heads + h) * qSeq + i) * vHead;
                        for (std::int64_t j = 0; j < total; ++j) {
                            const double p = scores[static_cast<std::size_t>(j)];
                            if (p == 0) continue;
                            const double* vRow = vBase + j * vHead;
                            for (std::int64_t d = 0; d < vHead; ++d) yRow[d] += p * vRow[d];
                        }
                    }
                }
            });

        Shape yShape = {batch, lq.heads, qSeq, vHead};
        Tensor yTensor = Tensor::fromVector<double>(yShape, y);
        if (lq.packed) {
            // [batch, heads, seq, v] -> [batch, seq, heads * v]
            std::vector<double> packed(y.size());
            for (std::int64_t b = 0; b < batch; ++b)
                for (std::int64_t h = 0; h < lq.heads; ++h)
                    for (std::int64_t s = 0; s < qSeq; ++s)
                        std::copy_n(y.data() + ((b * lq.heads + h) * qSeq + s) * vHead, vHead,
                                    packed.data() + ((b * qSeq + s) * lq.heads + h) * vHead);
            yTensor = Tensor::fromVector<double>({batch, qSeq, lq.heads * vHead}, packed);
        }
        outputs[0] = Value(yTensor.castTo(q.dtype()));
        if (outputs.size() > 1)
            outputs[1] = Value(Tensor::fromVector<double>({batch, lk.heads, total, headSize}, keys)
                                   .castTo(k.dtype()));
        if (outputs.size() > 2)
            outputs[2] = Value(Tensor::fromVector<double>({batch, lv.heads, total, vHead}, values)
                                   .castTo(v.dtype()));
        if (wantQk)
            outputs[3] = Value(Tensor::fromVector<double>({batch, lq.heads, qSeq, total}, qkOut)
                                   .castTo(q.dtype()));
    }

  private:
    int opset_;
    bool causal_;
    std::int64_t qHeads_, kvHeads_, qkOutputMode_;
    std::optional<double> scale_;
    double softcap_;
};

}  // namespace

void registerAttentionOps(KernelRegistry& registry) {
    registry.add<RotaryEmbeddingKernel>("RotaryEmbedding", 23);
    registry.add<AttentionKernel>("Attention", 23);  // 24: nonpad_kv_seqlen, bottom-right causal
}

}  // namespace onnxlens::engine::ops
