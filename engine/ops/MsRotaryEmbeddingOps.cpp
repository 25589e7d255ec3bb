// com.microsoft RotaryEmbedding (ONNX Runtime's contrib operator), as ONNX Runtime 1.30's CPU
// kernel computes it: input [B, S, hidden] or [B, N, S, H]; position_ids int64 [1] (positions
// pid + s) or [B, S]; cos_cache/sin_cache [max_position, rotary_dim / 2]. The first rotary_dim
// values of every head row are rotated (halves, or interleaved pairs), the rest pass through.
// For a 3-D input the head size is hidden / num_heads, or 2 * the cache width without num_heads
// (rotary_embedding_dim needs num_heads, as in ONNX Runtime). scale and is_packed_batching do
// not change the CPU result and are not read.
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

std::string msg(const std::string& text) { return "RotaryEmbedding: " + text; }

class MsRotaryEmbeddingKernel final : public Kernel {
  public:
    explicit MsRotaryEmbeddingKernel(const NodeInfo& node)
        : interleaved_(node.getInt("interleaved", 0) != 0),
          heads_(node.getInt("num_heads", 0)),
          rotaryDim_(node.getInt("rotary_embedding_dim", 0)) {
        require(heads_ >= 0, [&] {
            return msg("num_heads must not be negative, got " + std::to_string(heads_));
        });
        require(rotaryDim_ >= 0, [&] {
            return msg("rotary_embedding_dim must not be negative, got " +
                       std::to_string(rotaryDim_));
        });
        require(rotaryDim_ == 0 || heads_ > 0,
                [&] { return msg("num_heads must be given with rotary_embedding_dim"); });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& positionIds = inputTensor(inputs, 1);
        const Tensor& cosCache = inputTensor(inputs, 2);
        const Tensor& sinCache = inputTensor(inputs, 3);
        requireCountable({{&x, "input"}, {&positionIds, "position_ids"}, {&cosCache, "cos_cache"}},
                         "RotaryEmbedding");
        requireAttentionFloat(x, ValueName{"RotaryEmbedding", "input"});
        require(cosCache.dtype() == x.dtype() && sinCache.dtype() == x.dtype(),
                [&] { return msg("cos_cache and sin_cache must have the input's type"); });
        require(cosCache.rank() == 2 && cosCache.shape() == sinCache.shape(), [&] {
            return msg("cos_cache and sin_cache must both be [max_position, rotary_dim / 2], got " +
                       shapeToString(cosCache.shape()) + " and " + shapeToString(sinCache.shape()));
        });
        const std::int64_t half = cosCache.dim(1), maxPosition = cosCache.dim(0);

        // [batch, heads, seq, headSize] in the input's own layout.
        std::int64_t batch = 0, heads = 0, seq = 0, headSize = 0;
        HeadRows rows;
        if (x.rank() == 4) {
            batch = x.dim(0);
            heads = x.dim(1);
            seq = x.dim(2);
            headSize = x.dim(3);
            rows = HeadRows{nullptr, heads * seq * headSize, seq * headSize, headSize};
        } else {
            require(x.rank() == 3, [&] {
                return msg(
                    "input must be 3-D [batch, sequence, hidden] or 4-D "
                    "[batch, heads, sequence, head_size], got " +
                    shapeToString(x.shape()));
            });
            batch = x.dim(0);
            seq = x.dim(1);
            const std::int64_t hidden = x.dim(2);
            headSize = heads_ > 0 ? hidden / heads_ : 2 * half;
            require(headSize > 0 && hidden % headSize == 0 && (heads_ == 0 || hidden % heads_ == 0),
                    [&] {
                        return msg(
                            "hidden size " + std::to_string(hidden) + " does not split into " +
                            (heads_ > 0
                                 ? std::to_string(heads_) + " heads (num_heads)"
                                 : "heads of 2 * cos_cache width = " + std::to_string(2 * half)));
                    });
            heads = hidden / headSize;
            rows = HeadRows{nullptr, seq * hidden, headSize, hidden};
        }
        const std::int64_t rotaryDim = rotaryDim_ > 0 ? rotaryDim_ : headSize;
        require(rotaryDim <= headSize && rotaryDim % 2 == 0, [&] {
            return msg("rotary dimension " + std::to_string(rotaryDim) +
                       " (rotary_embedding_dim, else the head size) must be even and at most the "
                       "head size " +
                       std::to_string(headSize));
        });
        require(half * 2 == rotaryDim, [&] {
            return msg("cos_cache width " + std::to_string(half) +
                       " must be rotary dim / 2 = " + std::to_string(rotaryDim / 2) +
                       (rotaryDim_ > 0 ? " (rotary_embedding_dim)" : " (head size / 2)"));
        });

        require(positionIds.dtype() == DataType::Int64 || positionIds.dtype() == DataType::Int32,
                [&] { return msg("position_ids must be int64"); });
        const std::vector<std::int64_t> ids = positionIds.toInt64Vector();
        const bool offsetOnly = ids.size() == 1;  // [1]: positions pid + s
        require(offsetOnly || static_cast<std::int64_t>(ids.size()) == batch * seq, [&] {
            return msg("position_ids must be [1] or [" + std::to_string(batch) + ", " +
                       std::to_string(seq) + "], got " + shapeToString(positionIds.shape()));
        });
        std::vector<std::int64_t> positions(static_cast<std::size_t>(batch * seq));
        for (std::int64_t i = 0; i < batch * seq; ++i) {
            std::int64_t pos = ids[offsetOnly ? 0 : static_cast<std::size_t>(i)];
            const bool overflow = offsetOnly && __builtin_add_overflow(pos, i % seq, &pos);
            require(!overflow && pos >= 0 && pos < maxPosition, [&] {
                return msg("position " + std::to_string(pos) + " (batch " +
                           std::to_string(i / seq) + ", token " + std::to_string(i % seq) +
                           ") is outside cos_cache/sin_cache of " + std::to_string(maxPosition) +
                           " positions");
            });
            positions[static_cast<std::size_t>(i)] = pos;
        }

        Tensor y = asFloat(x).clone();
        const Tensor cos32 = asFloat(cosCache), sin32 = asFloat(sinCache);
        float* data = y.data<float>();
        const float* cosData = cos32.data<float>();
        const float* sinData = sin32.data<float>();
        ctx.pool().parallelFor(
            batch * seq, static_cast<double>(heads * rotaryDim * 3),
            [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t item = begin; item < end; ++item) {
                    const std::int64_t b = item / seq, s = item % seq;
                    const std::int64_t pos = positions[static_cast<std::size_t>(item)];
                    for (std::int64_t h = 0; h < heads; ++h)
                        rotateRow(data + b * rows.batch + h * rows.head + s * rows.row,
                                  cosData + pos * half, sinData + pos * half, rotaryDim,
                                  interleaved_);
                }
            });
        outputs[0] = Value(x.dtype() == DataType::Float ? y : y.castTo(x.dtype()));
    }

  private:
    bool interleaved_;
    std::int64_t heads_, rotaryDim_;
};

}  // namespace

void registerMsRotaryEmbeddingOps(KernelRegistry& registry) {
    registry.add<MsRotaryEmbeddingKernel>("RotaryEmbedding", 1, kLatestOpset, "com.microsoft");
}

}  // namespace onnxlens::engine::ops
