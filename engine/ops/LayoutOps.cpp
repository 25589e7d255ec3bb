// Layout conversions the optimizer inserts around channel-blocked chains (com.onnxlens domain):
//   ReorderToBlocked(X)   attribute block:    [N, C, spatial...] -> [N, ceil(C/b), spatial..., b]
//   ReorderFromBlocked(X) attribute channels: [N, Cb, spatial..., b] -> [N, channels, spatial...]
// and the data-movement nodes that stay inside such chains:
//   BlockedConcat(X...)   attribute channels (one per input): Concat on the channel axis
//   BlockedDepthToSpace(X) attributes blocksize, mode, channels (X's), plain_output: DepthToSpace
//                         of a blocked X, written blocked or (plain_output 1) as plain NCHW
//   BlockedChannelScale(X, S) attribute channels: X [N, Cb, spatial..., b] times S [N, Cb, 1...,
//                         b] broadcast over the spatial dims (a squeeze-excitation block's Mul)
// See ChannelBlockedLayout.h for the layout.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// One block of `lanes` floats; the common blocks as fixed-size copies the compiler inlines.
inline void copyLanes(const float* from, float* to, std::int64_t lanes) {
    if (lanes == 8)
        std::memcpy(to, from, 8 * sizeof(float));
    else if (lanes == 16)
        std::memcpy(to, from, 16 * sizeof(float));
    else
        std::copy_n(from, lanes, to);
}

// A run of consecutive channels moved between two blocked tensors, inside one channel block on
// both sides: `count` lanes from channel `from` of the source to channel `to` of the result.
struct LaneRun {
    std::int64_t from, to, count;
};

// Splits the move of `count` consecutive channels (source channel `from` on, result channel `to`
// on) into runs that cross no block boundary of either side, appended to `runs`.
void splitIntoLaneRuns(std::int64_t from, std::int64_t to, std::int64_t count, std::int64_t block,
                       std::vector<LaneRun>& runs) {
    while (count > 0) {
        const std::int64_t lanes = std::min({count, block - from % block, block - to % block});
        runs.push_back({from, to, lanes});
        from += lanes;
        to += lanes;
        count -= lanes;
    }
}

void checkBlock(std::int64_t block) {
    require(block >= 1 && block <= 64, [&] {
        return "block must be between 1 and 64 channels, got " + std::to_string(block);
    });
}

}  // namespace

Tensor toChannelBlocked(ThreadPool& pool, const Tensor& plain, std::int64_t block) {
    checkBlock(block);
    require(plain.dtype() == DataType::Float, [&] {
        return std::string("channel-blocked layouts hold float tensors, got ") +
               dataTypeName(plain.dtype());
    });
    require(plain.rank() >= 3, [&] {
        return "a channel-blocked tensor needs [N, C, spatial...], got " +
               shapeToString(plain.shape());
    });
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
    require(blocked.rank() >= 4, [&] {
        return "a channel-blocked tensor has rank >= 4 ([N, Cb, spatial..., b]), got " +
               shapeToString(blocked.shape());
    });
    const Shape& in = blocked.shape();
    const std::int64_t block = in.back();
    checkBlock(block);
    require(channels >= 1 && channelBlocks(channels, block) == in[1], [&] {
        return std::to_string(channels) + " channels do not fit the blocked shape " +
               shapeToString(in);
    });
    Shape plainShape{in[0], channels};
    plainShape.insert(plainShape.end(), in.begin() + 2, in.end() - 1);
    return plainShape;
}

Tensor fromChannelBlocked(ThreadPool& pool, const Tensor& blocked, std::int64_t channels) {
    require(blocked.dtype() == DataType::Float, [&] {
        return std::string("channel-blocked layouts hold float tensors, got ") +
               dataTypeName(blocked.dtype());
    });
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

// com.onnxlens BlockedConcat: blocked inputs [N, Cb_i, spatial..., b] holding channels[i]
// channels each, concatenated on the channel axis into [N, ceil(sum / b), spatial..., b].
class BlockedConcatKernel : public Kernel {
  public:
    explicit BlockedConcatKernel(const NodeInfo& node) : channels_(node.getInts("channels")) {
        require(!channels_.empty(), "BlockedConcat needs one channel count per input");
        for (auto c : channels_) require(c >= 1, "BlockedConcat: channel counts must be positive");
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(inputs.size() == channels_.size(), [&] {
            return "BlockedConcat: " + std::to_string(inputs.size()) + " inputs for " +
                   std::to_string(channels_.size()) + " channel counts";
        });
        const Tensor& first = inputTensor(inputs, 0);
        require(first.dtype() == DataType::Float && first.rank() >= 4, [&] {
            return "BlockedConcat: inputs must be blocked float tensors, got " +
                   shapeToString(first.shape());
        });
        const Shape& shape = first.shape();
        const std::int64_t block = shape.back(), n = shape[0];
        const std::int64_t plane = spatialElements(shape, 2, shape.size() - 1);
        std::int64_t total = 0;
        bool whole = true;  // every input but the last fills whole blocks
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Tensor& t = inputTensor(inputs, i);
            require(t.dtype() == DataType::Float,
                    [&] { return "BlockedConcat: input " + std::to_string(i) + " is not float"; });
            const Shape plain = plainShapeOfBlocked(t, channels_[i]);
            require(t.rank() == first.rank() && t.dim(0) == n && t.shape().back() == block &&
                        std::equal(shape.begin() + 2, shape.end(), t.shape().begin() + 2),
                    [&] {
                        return "BlockedConcat: input " + std::to_string(i) + " " +
                               shapeToString(t.shape()) + " does not match " + shapeToString(shape);
                    });
            if (i + 1 < inputs.size() && channels_[i] % block != 0) whole = false;
            total += plain[1];
        }
        const std::int64_t outBlocks = channelBlocks(total, block);
        Shape outShape = shape;
        outShape[1] = outBlocks;
        Tensor out(DataType::Float, outShape);  // every lane written below, padding included
        float* dst = out.data<float>();
        const std::int64_t slab = plane * block;  // one channel block of one image
        if (whole) {
            // Block-aligned: each input's blocks are one contiguous copy per image.
            std::int64_t firstBlock = 0;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                const Tensor& t = inputTensor(inputs, i);
                const std::int64_t blocks = t.dim(1);
                const float* src = t.data<float>();
                ctx.pool().parallelFor(
                    n * blocks, static_cast<double>(slab), [&](std::int64_t b0, std::int64_t b1) {
                        for (std::int64_t item = b0; item < b1; ++item) {
                            const std::int64_t image = item / blocks, b = item % blocks;
                            std::copy_n(src + item * slab, slab,
                                        dst + (image * outBlocks + firstBlock + b) * slab);
                        }
                    });
                firstBlock += blocks;
            }
        } else {
            // Channels shift across lanes: each result block gathers its lanes from the inputs
            // in runs of consecutive lanes (one block-plane read per run), its padded lanes
            // zeroed, one result block per task (no two tasks write the same cache line).
            std::vector<std::vector<std::pair<std::size_t, LaneRun>>> runsOf(
                static_cast<std::size_t>(outBlocks));
            std::int64_t offset = 0;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                std::vector<LaneRun> runs;
                splitIntoLaneRuns(0, offset, channels_[i], block, runs);
                for (const LaneRun& r : runs)
                    runsOf[static_cast<std::size_t>(r.to / block)].emplace_back(i, r);
                offset += channels_[i];
            }
            std::vector<const float*> sources;
            std::vector<std::int64_t> sourceBlocks;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                sources.push_back(inputTensor(inputs, i).data<float>());
                sourceBlocks.push_back(inputTensor(inputs, i).dim(1));
            }
            ctx.pool().parallelFor(
                n * outBlocks, static_cast<double>(slab), [&](std::int64_t b0, std::int64_t b1) {
                    for (std::int64_t item = b0; item < b1; ++item) {
                        const std::int64_t image = item / outBlocks, ob = item % outBlocks;
                        float* to = dst + item * slab;
                        const std::int64_t filled = std::min(block, total - ob * block);
                        if (filled < block)
                            for (std::int64_t p = 0; p < plane; ++p)
                                std::fill_n(to + p * block + filled, block - filled, 0.0f);
                        for (const auto& [i, r] : runsOf[static_cast<std::size_t>(ob)]) {
                            const float* from = sources[i] +
                                                (image * sourceBlocks[i] + r.from / block) * slab +
                                                r.from % block;
                            float* lanes = to + r.to % block;
                            for (std::int64_t p = 0; p < plane; ++p)
                                std::copy_n(from + p * block, r.count, lanes + p * block);
                        }
                    }
                });
        }
        outputs[0] = Value(std::move(out));
    }

  private:
    std::vector<std::int64_t> channels_;
};

// com.onnxlens BlockedDepthToSpace: DepthToSpace (DCR or CRD, blocksize s) of a blocked
// [N, Cb, H, W, b] X holding `channels` channels; Y is blocked [N, ceil(C'/b), H*s, W*s, b], or
// plain [N, C', H*s, W*s] with plain_output 1 (C' = channels / s^2).
class BlockedDepthToSpaceKernel : public Kernel {
  public:
    explicit BlockedDepthToSpaceKernel(const NodeInfo& node)
        : size_(node.getInt("blocksize")),
          channels_(node.getInt("channels")),
          plainOutput_(node.getInt("plain_output", 0) != 0) {
        const std::string mode = node.getString("mode", "DCR");
        require(mode == "DCR" || mode == "CRD",
                [&] { return "BlockedDepthToSpace: unknown mode '" + mode + "'"; });
        crd_ = mode == "CRD";
        require(size_ >= 1, "BlockedDepthToSpace: blocksize must be positive");
        require(channels_ >= 1 && channels_ % (size_ * size_) == 0, [&] {
            return "BlockedDepthToSpace: channels " + std::to_string(channels_) +
                   " are not divisible by blocksize^2";
        });
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::Float && x.rank() == 5, [&] {
            return "BlockedDepthToSpace: X must be blocked float [N, Cb, H, W, b], got " +
                   shapeToString(x.shape());
        });
        plainShapeOfBlocked(x, channels_);
        const std::int64_t n = x.dim(0), cb = x.dim(1), h = x.dim(2), w = x.dim(3), b = x.dim(4);
        const std::int64_t s = size_, depth = channels_ / (s * s), oh = h * s, ow = w * s;
        const std::int64_t outBlocks = channelBlocks(depth, b);
        // The input channel holding output channel c at tile position (i, j).
        auto source = [&](std::int64_t c, std::int64_t i, std::int64_t j) {
            return crd_ ? (c * s + i) * s + j : (i * s + j) * depth + c;
        };
        const float* src = x.data<float>();
        Tensor out = plainOutput_ || !crd_
                         ? Tensor(DataType::Float, plainOutput_ ? Shape{n, depth, oh, ow}
                                                                : Shape{n, outBlocks, oh, ow, b})
                         : Tensor::zeros(DataType::Float, {n, outBlocks, oh, ow, b});
        float* dst = out.data<float>();
        if (!plainOutput_ && !crd_) {
            // DCR: output block ob at tile (i, j) reads the consecutive input channels
            // (i*s + j)*C' + ob*b on: one whole block when C' fills whole blocks, else at most
            // two runs of lanes, the padded lanes of the last block zeroed. One output row per
            // task, written in order (input column iw, tile column j).
            std::vector<std::vector<LaneRun>> runsOf(static_cast<std::size_t>(s * s * outBlocks));
            for (std::int64_t tile = 0; tile < s * s; ++tile)
                for (std::int64_t ob = 0; ob < outBlocks; ++ob)
                    splitIntoLaneRuns(tile * depth + ob * b, ob * b, std::min(b, depth - ob * b), b,
                                      runsOf[static_cast<std::size_t>(tile * outBlocks + ob)]);
            ctx.pool().parallelFor(
                n * outBlocks * oh, static_cast<double>(ow * b),
                [&](std::int64_t r0, std::int64_t r1) {
                    for (std::int64_t row = r0; row < r1; ++row) {
                        const std::int64_t y = row % oh, ob = (row / oh) % outBlocks,
                                           image = row / (oh * outBlocks);
                        const std::int64_t ih = y / s, i = y % s;
                        const std::int64_t filled = std::min(b, depth - ob * b);
                        float* to = dst + row * ow * b;
                        for (std::int64_t iw = 0; iw < w; ++iw)
                            for (std::int64_t j = 0; j < s; ++j, to += b) {
                                const auto& runs =
                                    runsOf[static_cast<std::size_t>((i * s + j) * outBlocks + ob)];
                                for (const LaneRun& r : runs)
                                    copyLanes(
                                        src + (((image * cb + r.from / b) * h + ih) * w + iw) * b +
                                            r.from % b,
                                        to + r.to % b, r.count);
                                std::fill_n(to + filled, b - filled, 0.0f);
                            }
                    }
                });
            outputs[0] = Value(std::move(out));
            return;
        }
        ctx.pool().parallelFor(
            n * depth * oh, static_cast<double>(ow), [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t row = r0; row < r1; ++row) {
                    const std::int64_t y = row % oh, c = (row / oh) % depth,
                                       image = row / (oh * depth);
                    const std::int64_t ih = y / s, i = y % s;
                    float* to = plainOutput_
                                    ? dst + row * ow
                                    : dst + ((image * outBlocks + c / b) * oh + y) * ow * b + c % b;
                    const std::int64_t step = plainOutput_ ? 1 : b;
                    for (std::int64_t j = 0; j < s; ++j) {
                        const std::int64_t ic = source(c, i, j);
                        const float* from = src + ((image * cb + ic / b) * h + ih) * w * b + ic % b;
                        for (std::int64_t iw = 0; iw < w; ++iw)
                            to[(iw * s + j) * step] = from[iw * b];
                    }
                }
            });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t size_, channels_;
    bool plainOutput_, crd_ = false;
};

// X * S of a squeeze-excitation block inside a blocked chain: each image's channel block of X
// scaled lane by lane by the same block of S, whose spatial dims are all 1. Padded lanes are
// written 0 (whatever X or S hold there), as the reorders leave them.
class BlockedChannelScaleKernel : public Kernel {
  public:
    explicit BlockedChannelScaleKernel(const NodeInfo& node)
        : channels_(node.getInt("channels", 0)) {
        require(channels_ >= 1, "BlockedChannelScale needs a positive channel count");
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& scale = inputTensor(inputs, 1);
        require(x.dtype() == DataType::Float && scale.dtype() == DataType::Float && x.rank() >= 4 &&
                    scale.rank() == x.rank(),
                [&] {
                    return "BlockedChannelScale: X and S must be blocked float tensors of one "
                           "rank, got " +
                           shapeToString(x.shape()) + " and " + shapeToString(scale.shape());
                });
        const Shape& shape = x.shape();
        const std::int64_t n = shape[0], blocks = shape[1], block = shape.back();
        checkBlock(block);
        require(blocks == channelBlocks(channels_, block), [&] {
            return "BlockedChannelScale: X " + shapeToString(shape) + " does not hold " +
                   std::to_string(channels_) + " channels";
        });
        require(scale.dim(0) == n && scale.dim(1) == blocks && scale.shape().back() == block &&
                    scale.numel() == n * blocks * block,
                [&] {
                    return "BlockedChannelScale: S " + shapeToString(scale.shape()) +
                           " is not one value a channel of X " + shapeToString(shape);
                });
        const std::int64_t plane = spatialElements(shape, 2, shape.size() - 1);
        Tensor y(DataType::Float, shape);
        const float* in = x.data<float>();
        const float* factors = scale.data<float>();
        float* out = y.data<float>();
        auto scaleBlocks = [&]<std::int64_t B>() {
            const std::int64_t lanes = B ? B : block;
            ctx.pool().parallelFor(
                n * blocks, static_cast<double>(plane * lanes),
                [&](std::int64_t b0, std::int64_t b1) {
                    for (std::int64_t item = b0; item < b1; ++item) {
                        const std::int64_t valid =
                            std::min(lanes, channels_ - (item % blocks) * lanes);
                        // A local copy: read through the pointer, the factors were reloaded
                        // at every pixel (the output may alias them for the compiler), 2x slower.
                        float f[64];
                        std::copy_n(factors + item * lanes, lanes, f);
                        const float* src = in + item * plane * lanes;
                        float* dst = out + item * plane * lanes;
                        if (valid == lanes) {  // a whole block: one multiply a lane
                            for (std::int64_t p = 0; p < plane; ++p)
                                for (std::int64_t lane = 0; lane < lanes; ++lane)
                                    dst[p * lanes + lane] = src[p * lanes + lane] * f[lane];
                            continue;
                        }
                        for (std::int64_t p = 0; p < plane; ++p)
                            for (std::int64_t lane = 0; lane < lanes; ++lane)
                                dst[p * lanes + lane] =
                                    lane < valid ? src[p * lanes + lane] * f[lane] : 0.0f;
                    }
                });
        };
        withStaticBlock(block, scaleBlocks);
        outputs[0] = Value(std::move(y));
    }

  private:
    std::int64_t channels_;
};

}  // namespace

void registerLayoutOps(KernelRegistry& registry) {
    registry.add<ReorderToBlockedKernel>("ReorderToBlocked", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<ReorderFromBlockedKernel>("ReorderFromBlocked", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<BlockedConcatKernel>("BlockedConcat", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<BlockedChannelScaleKernel>("BlockedChannelScale", 1, kLatestOpset,
                                            kOnnxlensDomain);
    registry.add<BlockedDepthToSpaceKernel>("BlockedDepthToSpace", 1, kLatestOpset,
                                            kOnnxlensDomain);
}

}  // namespace onnxlens::engine::ops
