// Layout conversions the optimizer inserts around channel-blocked chains (com.onnxlens domain):
//   ReorderToBlocked(X)   attribute block:    [N, C, spatial...] -> [N, ceil(C/b), spatial..., b]
//   ReorderFromBlocked(X) attribute channels: [N, Cb, spatial..., b] -> [N, channels, spatial...]
// See ChannelBlockedLayout.h for the layout.
#include <algorithm>
#include <cstring>
#include <string>

#include "ChannelBlockedLayout.h"
#include "OpFamilies.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {

namespace {

std::int64_t spatialElements(const Shape& shape, std::size_t first, std::size_t end) {
    std::int64_t count = 1;
    for (std::size_t i = first; i < end; ++i) count *= shape[i];
    return count;
}

void checkBlock(std::int64_t block) {
    require(block >= 1 && block <= 64,
            "block must be between 1 and 64 channels, got " + std::to_string(block));
}

}  // namespace

Tensor toChannelBlocked(ThreadPool& pool, const Tensor& plain, std::int64_t block) {
    checkBlock(block);
    require(plain.dtype() == DataType::Float,
            std::string("channel-blocked layouts hold float tensors, got ") +
                dataTypeName(plain.dtype()));
    require(plain.rank() >= 3, "a channel-blocked tensor needs [N, C, spatial...], got " +
                                   shapeToString(plain.shape()));
    const Shape& in = plain.shape();
    const std::int64_t n = in[0], c = in[1], cb = channelBlocks(c, block);
    const std::int64_t plane = spatialElements(in, 2, in.size());
    Shape outShape{n, cb};
    outShape.insert(outShape.end(), in.begin() + 2, in.end());
    outShape.push_back(block);
    Tensor out(DataType::Float, outShape);
    const float* src = plain.data<float>();
    float* dst = out.data<float>();
    pool.parallelFor(n * cb, static_cast<double>(plane * block),
                     [&](std::int64_t b0, std::int64_t b1) {
                         for (std::int64_t item = b0; item < b1; ++item) {
                             const std::int64_t image = item / cb, first = (item % cb) * block;
                             const std::int64_t lanes = std::min(block, c - first);
                             float* o = dst + item * plane * block;
                             if (lanes < block) std::fill_n(o, plane * block, 0.0f);
                             for (std::int64_t lane = 0; lane < lanes; ++lane) {
                                 const float* channel = src + (image * c + first + lane) * plane;
                                 for (std::int64_t s = 0; s < plane; ++s)
                                     o[s * block + lane] = channel[s];
                             }
                         }
                     });
    return out;
}

Shape plainShapeOfBlocked(const Tensor& blocked, std::int64_t channels) {
    require(blocked.rank() >= 4,
            "a channel-blocked tensor has rank >= 4 ([N, Cb, spatial..., b]), got " +
                shapeToString(blocked.shape()));
    const Shape& in = blocked.shape();
    const std::int64_t block = in.back();
    checkBlock(block);
    require(
        channels >= 1 && channelBlocks(channels, block) == in[1],
        std::to_string(channels) + " channels do not fit the blocked shape " + shapeToString(in));
    Shape plainShape{in[0], channels};
    plainShape.insert(plainShape.end(), in.begin() + 2, in.end() - 1);
    return plainShape;
}

Tensor fromChannelBlocked(ThreadPool& pool, const Tensor& blocked, std::int64_t channels) {
    require(blocked.dtype() == DataType::Float,
            std::string("channel-blocked layouts hold float tensors, got ") +
                dataTypeName(blocked.dtype()));
    const Shape plainShape = plainShapeOfBlocked(blocked, channels);
    const Shape& in = blocked.shape();
    const std::int64_t block = in.back(), n = in[0], cb = in[1];
    const std::int64_t plane = spatialElements(in, 2, in.size() - 1);
    Tensor out(DataType::Float, plainShape);
    const float* src = blocked.data<float>();
    float* dst = out.data<float>();
    pool.parallelFor(n * cb, static_cast<double>(plane * block),
                     [&](std::int64_t b0, std::int64_t b1) {
                         for (std::int64_t item = b0; item < b1; ++item) {
                             const std::int64_t image = item / cb, first = (item % cb) * block;
                             const std::int64_t lanes = std::min(block, channels - first);
                             const float* i = src + item * plane * block;
                             for (std::int64_t lane = 0; lane < lanes; ++lane) {
                                 float* channel = dst + (image * channels + first + lane) * plane;
                                 for (std::int64_t s = 0; s < plane; ++s)
                                     channel[s] = i[s * block + lane];
                             }
                         }
                     });
    return out;
}

namespace {

class ReorderToBlockedKernel : public Kernel {
  public:
    explicit ReorderToBlockedKernel(const NodeInfo& node) : block_(node.getInt("block")) {
        checkBlock(block_);
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        outputs[0] = Value(toChannelBlocked(ctx.pool(), inputTensor(inputs, 0), block_));
    }

  private:
    std::int64_t block_;
};

class ReorderFromBlockedKernel : public Kernel {
  public:
    explicit ReorderFromBlockedKernel(const NodeInfo& node) : channels_(node.getInt("channels")) {
        require(channels_ >= 1, "channels must be positive");
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        outputs[0] = Value(fromChannelBlocked(ctx.pool(), inputTensor(inputs, 0), channels_));
    }

  private:
    std::int64_t channels_;
};

}  // namespace

void registerLayoutOps(KernelRegistry& registry) {
    registry.add<ReorderToBlockedKernel>("ReorderToBlocked", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<ReorderFromBlockedKernel>("ReorderFromBlocked", 1, kLatestOpset, kOnnxlensDomain);
}

}  // namespace onnxlens::engine::ops
