// Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv, com.onnxlens ConvIntegerToFloat.
// Conv is im2col + GEMM (Eigen, row-major maps) split over (batch, group, column tile) on the
// thread pool, with a direct path for depthwise and a copy-free path for pointwise (1x1)
// convolutions; with oneDNN, float Conv runs a cached oneDNN primitive instead.
// ConvTranspose is GEMM + col2im. The integer convolutions run on oneDNN's int8 convolution
// (DnnlInt8Conv.h) when the weights are int8 with zero point 0; otherwise (and without oneDNN)
// they subtract zero points up front (so padding contributes zero, as if padded with the zero
// point) and reuse the int32 path.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>
#endif

#include "ByteTranspose.h"
#include "ChannelBlockedLayout.h"
#include "ConvGeometry.h"
#include "DnnlCallArgs.h"
#include "DnnlInt8Conv.h"
#include "FusedActivation.h"
#include "OpFamilies.h"
#include "OpenMpThreads.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/WeightMemory.h"

namespace onnxlens::engine::ops {

namespace {

template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using StridedMap = Eigen::Map<RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using ConstStridedMap = Eigen::Map<const RowMajorMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// Columns of the im2col matrix for output positions [p0, p0 + count) of one channel group:
// col is [channels * kernelSize][count] row-major; out-of-input taps are zero.
template <class T>
void im2colTile(const T* x, std::int64_t channels, const WindowGeometry& g, std::int64_t p0,
                std::int64_t count, T* col) {
    const auto [IZ, IY, IX] = g.input;
    const auto [OZ, OY, OX] = g.output;
    (void)OZ;
    T* row = col;
    for (std::int64_t c = 0; c < channels; ++c) {
        const T* plane = x + c * IZ * IY * IX;
        for (std::int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (std::int64_t ky = 0; ky < g.kernel[1]; ++ky)
                for (std::int64_t kx = 0; kx < g.kernel[2]; ++kx, row += count) {
                    std::int64_t p = p0, j = 0;
                    while (j < count) {
                        const std::int64_t oz = p / (OY * OX), oy = (p / OX) % OY, ox = p % OX;
                        const std::int64_t run = std::min(OX - ox, count - j);
                        const std::int64_t iz =
                            oz * g.stride[0] - g.padBegin[0] + kz * g.dilation[0];
                        const std::int64_t iy =
                            oy * g.stride[1] - g.padBegin[1] + ky * g.dilation[1];
                        if (iz < 0 || iz >= IZ || iy < 0 || iy >= IY) {
                            std::fill(row + j, row + j + run, T(0));
                        } else {
                            const T* line = plane + (iz * IY + iy) * IX;
                            std::int64_t ix = ox * g.stride[2] - g.padBegin[2] + kx * g.dilation[2];
                            for (std::int64_t t = 0; t < run; ++t, ix += g.stride[2])
                                row[j + t] = (ix >= 0 && ix < IX) ? line[ix] : T(0);
                        }
                        j += run;
                        p += run;
                    }
                }
    }
}

// One output plane of a convolution whose groups hold a single input channel (depthwise): each
// kernel tap adds a scaled input row segment to an output row, a loop the compiler vectorizes.
template <class T>
void depthwisePlane(const T* x, const T* w, T bias, const WindowGeometry& g, T* y) {
    using window_detail::ceilDiv;
    using window_detail::floorDiv;
    const auto [IZ, IY, IX] = g.input;
    const auto [OZ, OY, OX] = g.output;
    const std::int64_t sx = g.stride[2];
    std::fill_n(y, OZ * OY * OX, bias);
    for (std::int64_t oz = 0; oz < OZ; ++oz)
        for (std::int64_t oy = 0; oy < OY; ++oy) {
            T* row = y + (oz * OY + oy) * OX;
            for (std::int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                const std::int64_t iz = oz * g.stride[0] - g.padBegin[0] + kz * g.dilation[0];
                if (iz < 0 || iz >= IZ) continue;
                for (std::int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                    const std::int64_t iy = oy * g.stride[1] - g.padBegin[1] + ky * g.dilation[1];
                    if (iy < 0 || iy >= IY) continue;
                    const T* line = x + (iz * IY + iy) * IX;
                    const T* taps = w + (kz * g.kernel[1] + ky) * g.kernel[2];
                    for (std::int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                        const T weight = taps[kx];
                        const std::int64_t offset = kx * g.dilation[2] - g.padBegin[2];
                        // Outputs whose input column ox * sx + offset lies in [0, IX).
                        const std::int64_t lo = std::max<std::int64_t>(0, ceilDiv(-offset, sx));
                        const std::int64_t hi = std::min(OX - 1, floorDiv(IX - 1 - offset, sx));
                        if (sx == 1) {
                            const T* source = line + offset;
                            for (std::int64_t ox = lo; ox <= hi; ++ox)
                                row[ox] += weight * source[ox];
                        } else {
                            for (std::int64_t ox = lo; ox <= hi; ++ox)
                                row[ox] += weight * line[ox * sx + offset];
                        }
                    }
                }
            }
        }
}

// Y = conv(X, W) + B for T in {float, double, int32}. x: [N, C, in], w: [M, C/G, k], bias: [M]
// or null, y: [N, M, out].
template <class T>
void convolve(ThreadPool& pool, const ConvProblem& pr, const T* x, const T* w, const T* bias,
              T* y) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t Cg = pr.inChannelsPerGroup(), Mg = pr.outChannelsPerGroup();
    const std::int64_t K = Cg * g.kernelSize(), P = g.outputSize(), inP = g.inputSize();
    const std::int64_t N = pr.batch, G = pr.groups, M = pr.outChannels;
    if (N == 0 || M == 0 || P == 0) return;
    if (K == 0) {
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t m = 0; m < M; ++m)
                std::fill_n(y + (n * M + m) * P, P, bias ? bias[m] : T(0));
        return;
    }

    if (Cg == 1 && !g.isPointwise()) {
        const std::int64_t kernelSize = g.kernelSize();
        pool.parallelFor(N * M, 2.0 * P * kernelSize, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t item = begin; item < end; ++item) {
                const std::int64_t n = item / M, m = item % M, group = m / Mg;
                depthwisePlane(x + (n * pr.inChannels + group) * inP, w + m * kernelSize,
                               bias ? bias[m] : T(0), g, y + item * P);
            }
        });
        return;
    }

    // Column tiles keep the im2col buffer near the cache and give the pool work to split.
    const bool pointwise = g.isPointwise();
    const std::int64_t tile =
        std::clamp<std::int64_t>((std::int64_t{1} << 16) / std::max<std::int64_t>(K, 1), 64, 4096);
    const std::int64_t tiles = (P + tile - 1) / tile;
    pool.parallelFor(
        N * G * tiles, 2.0 * Mg * K * std::min(tile, P), [&](std::int64_t begin, std::int64_t end) {
            std::vector<T> col(pointwise ? 0 : static_cast<std::size_t>(K * std::min(tile, P)));
            for (std::int64_t item = begin; item < end; ++item) {
                const std::int64_t t = item % tiles, ng = item / tiles;
                const std::int64_t n = ng / G, group = ng % G;
                const std::int64_t p0 = t * tile, count = std::min(tile, P - p0);
                const T* xg = x + (n * pr.inChannels + group * Cg) * inP;
                ConstStridedMap<T> weights(w + group * Mg * K, Mg, K, Eigen::OuterStride<>(K));
                StridedMap<T> out(y + (n * M + group * Mg) * P + p0, Mg, count,
                                  Eigen::OuterStride<>(P));
                if (pointwise) {
                    ConstStridedMap<T> in(xg + p0, Cg, count, Eigen::OuterStride<>(inP));
                    out.noalias() = weights * in;
                } else {
                    im2colTile(xg, Cg, g, p0, count, col.data());
                    ConstStridedMap<T> in(col.data(), K, count, Eigen::OuterStride<>(count));
                    out.noalias() = weights * in;
                }
                if (bias) {
                    for (std::int64_t m = 0; m < Mg; ++m)
                        out.row(m).array() += bias[group * Mg + m];
                }
            }
        });
}

// Y = convTranspose(X, W) + B. x: [N, C, in], w: [C, M/G, k], y: [N, M, out]; the geometry's
// input is X's spatial size and its output Y's (pads may be negative: output_shape larger than
// the natural size).
template <class T>
void convolveTransposed(ThreadPool& pool, const ConvProblem& pr, const T* x, const T* w,
                        const T* bias, T* y) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t Cg = pr.inChannelsPerGroup(), Mg = pr.outChannelsPerGroup();
    const std::int64_t K = g.kernelSize(), inP = g.inputSize(), outP = g.outputSize();
    const std::int64_t N = pr.batch, M = pr.outChannels;
    if (N == 0 || M == 0 || outP == 0) return;
    pool.parallelFor(N * M, 2.0 * K * Cg * inP + outP, [&](std::int64_t begin, std::int64_t end) {
        RowMajorMatrix<T> col(K, inP);
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t n = item / M, channel = item % M;
            const std::int64_t group = channel / Mg, m = channel % Mg;
            T* plane = y + item * outP;
            std::fill_n(plane, outP, bias ? bias[channel] : T(0));
            if (inP == 0 || Cg == 0) continue;
            ConstStridedMap<T> weights(w + group * Cg * Mg * K, Cg, Mg * K,
                                       Eigen::OuterStride<>(Mg * K));
            ConstStridedMap<T> in(x + (n * pr.inChannels + group * Cg) * inP, Cg, inP,
                                  Eigen::OuterStride<>(inP));
            col.noalias() = weights.middleCols(m * K, K).transpose() * in;
            const auto [IZ, IY, IX] = g.input;
            const auto [OZ, OY, OX] = g.output;
            const T* row = col.data();
            for (std::int64_t kz = 0; kz < g.kernel[0]; ++kz)
                for (std::int64_t ky = 0; ky < g.kernel[1]; ++ky)
                    for (std::int64_t kx = 0; kx < g.kernel[2]; ++kx, row += inP) {
                        const T* value = row;
                        for (std::int64_t iz = 0; iz < IZ; ++iz) {
                            const std::int64_t oz =
                                iz * g.stride[0] - g.padBegin[0] + kz * g.dilation[0];
                            if (oz < 0 || oz >= OZ) {
                                value += IY * IX;
                                continue;
                            }
                            for (std::int64_t iy = 0; iy < IY; ++iy, value += IX) {
                                const std::int64_t oy =
                                    iy * g.stride[1] - g.padBegin[1] + ky * g.dilation[1];
                                if (oy < 0 || oy >= OY) continue;
                                T* line = plane + (oz * OY + oy) * OX;
                                for (std::int64_t ix = 0; ix < IX; ++ix) {
                                    const std::int64_t ox =
                                        ix * g.stride[2] - g.padBegin[2] + kx * g.dilation[2];
                                    if (ox >= 0 && ox < OX) line[ox] += value[ix];
                                }
                            }
                        }
                    }
        }
    });
}

// The effective kernel shape: the attribute when given (it must agree with W), else W's dims.
std::vector<std::int64_t> kernelShapeOf(const WindowAttributes& attrs, const Tensor& w) {
    Shape fromWeights = spatialDims(w);
    if (attrs.kernelShape.empty()) return fromWeights;
    require(attrs.kernelShape == fromWeights, [&] {
        return "kernel_shape " + shapeToString(attrs.kernelShape) +
               " does not match the weights' spatial dims " + shapeToString(fromWeights);
    });
    return attrs.kernelShape;
}

// Checks X and W and returns the problem of a forward convolution (Conv, ConvInteger,
// QLinearConv).
ConvProblem forwardProblem(const WindowAttributes& attrs, std::int64_t groups, const Shape& x,
                           const Tensor& w) {
    require(x.size() >= 3, [&] {
        return "input X must have rank >= 3 (N, C, spatial...), got " + shapeToString(x);
    });
    require(w.rank() == static_cast<int>(x.size()), [&] {
        return "weights W " + shapeToString(w.shape()) + " must have the rank of X " +
               shapeToString(x);
    });
    require(groups > 0, "group must be positive");
    ConvProblem pr;
    pr.batch = x[0];
    pr.inChannels = x[1];
    pr.outChannels = w.dim(0);
    pr.groups = groups;
    require(pr.inChannels == w.dim(1) * groups, [&] {
        return "input channels " + std::to_string(pr.inChannels) + " != W.shape[1] " +
               std::to_string(w.dim(1)) + " x group " + std::to_string(groups);
    });
    require(pr.outChannels % groups == 0, [&] {
        return "output channels " + std::to_string(pr.outChannels) +
               " are not divisible by group " + std::to_string(groups);
    });
    pr.geometry = makeWindowGeometry(attrs, Shape(x.begin() + 2, x.end()), kernelShapeOf(attrs, w));
    resolveForwardWindow(pr.geometry, attrs.autoPad, false);
    return pr;
}

ConvProblem forwardProblem(const WindowAttributes& attrs, std::int64_t groups, const Tensor& x,
                           const Tensor& w) {
    return forwardProblem(attrs, groups, x.shape(), w);
}

Shape forwardOutputShape(const ConvProblem& pr) {
    Shape shape{pr.batch, pr.outChannels};
    for (auto d : pr.geometry.outputShape()) shape.push_back(d);
    return shape;
}

void checkBias(const Tensor* bias, std::int64_t channels) {
    if (!bias) return;
    require(bias->rank() == 1 && bias->dim(0) == channels, [&] {
        return "bias B must have shape [" + std::to_string(channels) + "], got " +
               shapeToString(bias->shape());
    });
}

// Runs `compute` in float for the 16-bit float types, natively for float and double.
template <class Compute>
Tensor computeInFloatingType(const Tensor& x, const Tensor& w, const Tensor* bias,
                             const Shape& outputShape, Compute&& compute) {
    return dispatchFloat(x.dtype(), [&]<class T>() -> Tensor {
        require(w.dtype() == x.dtype() && (!bias || bias->dtype() == x.dtype()),
                "X, W and B must have the same element type");
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            Tensor y(x.dtype(), outputShape);
            compute(x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr, y.data<T>());
            return y;
        } else {
            Tensor xf = x.castTo(DataType::Float), wf = w.castTo(DataType::Float);
            Tensor bf = bias ? bias->castTo(DataType::Float) : Tensor();
            Tensor y(DataType::Float, outputShape);
            compute(xf.data<float>(), wf.data<float>(), bias ? bf.data<float>() : nullptr,
                    y.data<float>());
            return y.castTo(x.dtype());
        }
    });
}

// What a convolution adds after the product: Z (FusedConv's residual input, same shape as Y)
// and an activation, both folded into oneDNN's post-ops or applied in one pass after Eigen's.
struct ConvEpilogue {
    const float* sum = nullptr;  // Z, or null
    FusedActivation activation;
    bool none() const { return sum == nullptr && activation.none(); }
};

#ifdef ONNXLENS_WITH_DNNL
// A oneDNN float convolution (forward, or transposed for ConvTranspose) for one problem size,
// created on first use and reused while the sizes stay the same. Data is in the plain NC...
// layouts of the engine's tensors, or (BlockedConv, 2-D only) channel-blocked nChw8c/nChw16c
// (ChannelBlockedLayout.h); the weights take the layout oneDNN prefers, reordered once and kept
// while the same weight buffer comes back (initializers do, every run).
// The data layouts of a oneDNN convolution: 0 for plain data, else the channel block.
struct DnnlDataLayouts {
    std::int64_t srcBlock = 0, dstBlock = 0;
    bool blocked() const { return srcBlock || dstBlock; }
};

class DnnlConvolution {
  public:
    using Layouts = DnnlDataLayouts;
    explicit DnnlConvolution(bool transposed) : transposed_(transposed) {}

    bool supports(const ConvProblem& pr, Layouts layouts = {}) const {
        const WindowGeometry& g = pr.geometry;
        if (layouts.blocked()) {
            if (transposed_ || g.spatialRank != 2) return false;
            for (auto b : {layouts.srcBlock, layouts.dstBlock})
                if (b != 0 && b != 8 && b != 16) return false;
            // Grouped convolutions other than depthwise need whole blocks per group.
            const bool depthwise = pr.inChannelsPerGroup() == 1 && pr.outChannelsPerGroup() == 1;
            if (pr.groups > 1 && !depthwise) return false;
        } else if (!transposed_ && pr.inChannelsPerGroup() == 1 && pr.groups > 1) {
            // On plain NCHW data oneDNN's depthwise path measured slower than the direct loop.
            return false;
        }
        for (int s = 0; s < kMaxWindowRank; ++s)
            if (g.padBegin[s] < 0 || padRight(g, s) < 0) return false;
        return pr.batch > 0 && pr.inChannels > 0 && pr.outChannels > 0 && g.outputSize() > 0 &&
               g.inputSize() > 0;
    }

    void run(const ConvProblem& pr, const float* x, const Tensor& weightTensor, const float* bias,
             float* y, const ConvEpilogue& epilogue, Layouts layouts = {}) {
        std::lock_guard lock(mutex_);
        // A small convolution is created and run on the threads its work is worth (a fork and
        // join cost more than a thread with little to do gains).
        const WindowGeometry& g = pr.geometry;
        const double flops = 2.0 * static_cast<double>(pr.batch * pr.outChannels) *
                             static_cast<double>(g.outputSize() * pr.inChannelsPerGroup()) *
                             static_cast<double>(g.kernelSize());
        const ThreadBudget budget(flops);
        Key key = keyOf(pr, bias != nullptr, epilogue, layouts);
        if (!primitive_ || key != key_) create(pr, bias != nullptr, epilogue, layouts, key);
        const float* w = weightTensor.data<float>();
        if (weightsDesc_ != userWeightsDesc_) {
            // Holding the tensor keeps its buffer alive and shared (so never updated in place):
            // the same buffer means the same weights.
            if (!reorderedWeights_ || !weightTensor.sharesStorageWith(heldWeights_)) {
                // The copy this kernel keeps (replaced, not added to, when the weights change).
                if (!reorderedWeights_) countWeightReorder(weightsDesc_.get_size());
                dnnl::memory user(userWeightsDesc_, engine_, const_cast<float*>(w));
                reorderedWeights_ = dnnl::memory(weightsDesc_, engine_);
                dnnl::reorder(user, reorderedWeights_).execute(stream_, user, reorderedWeights_);
                heldWeights_ = weightTensor;
            }
            w = static_cast<const float*>(reorderedWeights_.get_data_handle());
        }
        // The sum post-op adds to what dst holds: Z, unless the caller computes in Z's buffer.
        if (epilogue.sum && epilogue.sum != y)
            std::copy_n(epilogue.sum, dstDesc_.get_size() / sizeof(float), y);
        call_.execute(
            *primitive_, stream_,
            {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}, {DNNL_ARG_BIAS, bias}});
        stream_.wait();
    }

  private:
    using Key = std::vector<std::int64_t>;

    // The end padding in oneDNN's terms. For a transposed convolution the engine's geometry
    // folds output_padding and output_shape into padEnd; oneDNN wants the padding that yields
    // the output size from the input size.
    std::int64_t padRight(const WindowGeometry& g, int s) const {
        if (!transposed_) return g.padEnd[s];
        const std::int64_t extent = (g.kernel[s] - 1) * g.dilation[s] + 1;
        return (g.input[s] - 1) * g.stride[s] + extent - g.padBegin[s] - g.output[s];
    }

    // 3x3 convolutions of stride 1 on channel-blocked data run on oneDNN's Winograd F(2x2, 3x3)
    // kernel where it has one: 2.25x fewer multiplications, the same sums in another order (its
    // transforms add and subtract at most four inputs, so the rounding stays near the direct
    // kernel's: ResNet-50's logits within 1e-5 of ONNX Runtime's direct ones, relative to the
    // largest). Measured stand-alone on the AVX-512 Xeon (1 and 2 threads, channels 16 to 256,
    // 7x7 to 112x112): 0.50-0.58 of the direct kernel's time from 48 channels on 14x14 and
    // larger, about even or slower below (16 channels 1.09-1.38, 7x7 0.77-1.25).
    static bool winogradPays(const ConvProblem& pr, Layouts layouts) {
        constexpr std::int64_t kMinChannels = 48, kMinOutputPixels = 14 * 14;
        const WindowGeometry& g = pr.geometry;
        if (!layouts.srcBlock || !layouts.dstBlock || g.spatialRank != 2 || pr.groups != 1 ||
            std::min(pr.inChannels, pr.outChannels) < kMinChannels ||
            g.outputSize() < kMinOutputPixels)
            return false;
        for (int s = kMaxWindowRank - 2; s < kMaxWindowRank; ++s)
            if (g.kernel[s] != 3 || g.stride[s] != 1 || g.dilation[s] != 1) return false;
        return true;
    }

    static Key keyOf(const ConvProblem& pr, bool hasBias, const ConvEpilogue& epilogue,
                     Layouts layouts) {
        const WindowGeometry& g = pr.geometry;
        Key key{layouts.srcBlock, layouts.dstBlock, pr.batch, pr.inChannels, pr.outChannels,
                pr.groups, g.spatialRank, hasBias, epilogue.sum != nullptr,
                static_cast<std::int64_t>(epilogue.activation.kind),
                // oneDNN fixes a primitive's thread count when it is made (ThreadBudget, and the
                // session's governor changes the count between runs).
                threadCountOfCallingThread()};
        for (int s = 0; s < kMaxWindowRank; ++s)
            key.insert(key.end(), {g.input[s], g.output[s], g.kernel[s], g.stride[s], g.dilation[s],
                                   g.padBegin[s], g.padEnd[s]});
        return key;
    }

    static dnnl::primitive_attr attributesFor(const ConvEpilogue& epilogue) {
        dnnl::post_ops ops;
        if (epilogue.sum) ops.append_sum(1.0f);
        const FusedActivation& a = epilogue.activation;
        using Kind = FusedActivation::Kind;
        switch (a.kind) {
            case Kind::None:
                break;
            case Kind::Relu:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
                break;
            case Kind::LeakyRelu:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, a.alpha, 0.0f);
                break;
            case Kind::Clip:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, a.alpha, a.beta);
                break;
            case Kind::Sigmoid:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
                break;
            case Kind::Tanh:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
                break;
            case Kind::HardSigmoid:  // oneDNN 2.6 has no hardsigmoid: a linear map, then clip
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, a.alpha, a.beta);
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 1.0f);
                break;
            case Kind::HardSwish:
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_hardswish, 0.0f, 0.0f);
                break;
            case Kind::Swish:  // x * sigmoid(alpha x)
                ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, a.alpha, 0.0f);
                break;
        }
        dnnl::primitive_attr attr;
        attr.set_post_ops(ops);
        return attr;
    }

    void create(const ConvProblem& pr, bool hasBias, const ConvEpilogue& epilogue, Layouts layouts,
                const Key& key) {
        using tag = dnnl::memory::format_tag;
        using dt = dnnl::memory::data_type;
        const WindowGeometry& g = pr.geometry;
        const int offset = kMaxWindowRank - g.spatialRank;
        auto spatial = [&](auto value) {
            dnnl::memory::dims dims;
            for (int s = offset; s < kMaxWindowRank; ++s) dims.push_back(value(s));
            return dims;
        };
        dnnl::memory::dims srcDims{pr.batch, pr.inChannels}, dstDims{pr.batch, pr.outChannels};
        for (auto d : spatial([&](int s) { return g.input[s]; })) srcDims.push_back(d);
        for (auto d : spatial([&](int s) { return g.output[s]; })) dstDims.push_back(d);
        dnnl::memory::dims weightDims;
        if (pr.groups > 1)
            weightDims = {pr.groups, pr.outChannelsPerGroup(), pr.inChannelsPerGroup()};
        else
            weightDims = {pr.outChannels, pr.inChannels};
        for (auto d : spatial([&](int s) { return g.kernel[s]; })) weightDims.push_back(d);
        const int r = g.spatialRank - 1;
        const tag dataTags[] = {tag::ncw, tag::nchw, tag::ncdhw};
        // Conv weights are [M, C/G, k...] (o, i); ConvTranspose weights [C, M/G, k...] (i, o).
        const tag forwardTags[] = {tag::oiw, tag::oihw, tag::oidhw};
        const tag forwardGroupTags[] = {tag::goiw, tag::goihw, tag::goidhw};
        const tag transposedTags[] = {tag::bac, tag::iohw, tag::iodhw};
        const tag transposedGroupTags[] = {tag::acbd, tag::giohw, tag::giodhw};
        const tag weightTag = transposed_
                                  ? (pr.groups > 1 ? transposedGroupTags[r] : transposedTags[r])
                                  : (pr.groups > 1 ? forwardGroupTags[r] : forwardTags[r]);
        auto dataTag = [&](std::int64_t block) {
            if (block == 16) return tag::nChw16c;
            if (block == 8) return tag::nChw8c;
            return dataTags[r];
        };
        srcDesc_ = dnnl::memory::desc(srcDims, dt::f32, dataTag(layouts.srcBlock));
        dstDesc_ = dnnl::memory::desc(dstDims, dt::f32, dataTag(layouts.dstBlock));
        userWeightsDesc_ = dnnl::memory::desc(weightDims, dt::f32, weightTag);
        const dnnl::memory::desc anyWeights(weightDims, dt::f32, tag::any);
        biasDesc_ = dnnl::memory::desc({pr.outChannels}, dt::f32, tag::x);
        const auto strides = spatial([&](int s) { return g.stride[s]; });
        const auto dilations = spatial([&](int s) { return g.dilation[s] - 1; });
        const auto padLeft = spatial([&](int s) { return g.padBegin[s]; });
        const auto padRightDims = spatial([&](int s) { return padRight(g, s); });
        const auto biasDesc = hasBias ? biasDesc_ : dnnl::memory::desc();
        const auto attr = userScratchpad(attributesFor(epilogue));
        dnnl::memory::desc scratchpad;
        // oneDNN 2.x: an operation descriptor, then the primitive descriptor.
        if (transposed_) {
            auto operation = dnnl::deconvolution_forward::desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, srcDesc_,
                anyWeights, biasDesc, dstDesc_, strides, dilations, padLeft, padRightDims);
            dnnl::deconvolution_forward::primitive_desc pd(operation, attr, engine_);
            weightsDesc_ = pd.weights_desc();
            scratchpad = pd.scratchpad_desc();
            primitive_ = std::make_unique<dnnl::deconvolution_forward>(pd);
        } else {
            auto primitiveDesc = [&](dnnl::algorithm algorithm) {
                return dnnl::convolution_forward::primitive_desc(
                    dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm,
                                                    srcDesc_, anyWeights, biasDesc, dstDesc_,
                                                    strides, dilations, padLeft, padRightDims),
                    attr, engine_);
            };
            std::optional<dnnl::convolution_forward::primitive_desc> pd;
            if (winogradPays(pr, layouts)) {
                try {
                    pd = primitiveDesc(dnnl::algorithm::convolution_winograd);
                } catch (const dnnl::error&) {
                    // no Winograd kernel on this CPU (oneDNN 2.6 has one for AVX-512 only)
                }
            }
            if (!pd) pd = primitiveDesc(dnnl::algorithm::convolution_direct);
            weightsDesc_ = pd->weights_desc();
            scratchpad = pd->scratchpad_desc();
            primitive_ = std::make_unique<dnnl::convolution_forward>(*pd);
        }
        reorderedWeights_ = dnnl::memory();
        heldWeights_ = Tensor();
        call_ = DnnlCallArgs();
        call_.add(DNNL_ARG_SRC, srcDesc_, engine_);
        call_.add(DNNL_ARG_WEIGHTS, weightsDesc_, engine_);
        call_.add(DNNL_ARG_DST, dstDesc_, engine_);
        if (hasBias) call_.add(DNNL_ARG_BIAS, biasDesc_, engine_);
        call_.addScratchpad(scratchpad, engine_);
        key_ = key;
    }

    bool transposed_;
    std::mutex mutex_;
    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream_{engine_};
    std::unique_ptr<dnnl::primitive> primitive_;
    dnnl::memory::desc srcDesc_, dstDesc_, userWeightsDesc_, weightsDesc_, biasDesc_;
    DnnlCallArgs call_;  // the primitive's arguments, pointed at each call's buffers
    dnnl::memory reorderedWeights_;
    Tensor heldWeights_;
    Key key_;
};
#else
// Without oneDNN every problem takes the Eigen path.
struct DnnlConvolution {
    explicit DnnlConvolution(bool) {}
};
#endif

// Runs a float problem on oneDNN when the build has it and the problem maps onto it; false when
// the caller must compute it itself. `weights` is the tensor `w` points into.
template <class T>
bool runOnDnnl([[maybe_unused]] DnnlConvolution& dnnl, [[maybe_unused]] const ConvProblem& pr,
               [[maybe_unused]] const T* x, [[maybe_unused]] const Tensor& weights,
               [[maybe_unused]] const T* bias, [[maybe_unused]] T* y,
               [[maybe_unused]] const ConvEpilogue& epilogue = {}) {
#ifdef ONNXLENS_WITH_DNNL
    if constexpr (std::is_same_v<T, float>) {
        if (weights.dtype() == DataType::Float && dnnl.supports(pr)) {
            dnnl.run(pr, x, weights, bias, y, epilogue);
            return true;
        }
    }
#endif
    return false;
}

// Conv, com.onnxlens FusedConv (the optimizer's Conv [+ Add] [+ activation]) and ONNX Runtime's
// com.microsoft FusedConv (same inputs and attributes): Y = activation(conv(X, W) + B + Z), Z an
// optional fourth input of Y's shape.
class ConvKernel : public Kernel {
  public:
    explicit ConvKernel(const NodeInfo& node)
        : attrs_(node),
          groups_(node.getInt("group", 1)),
          activation_(FusedActivation::fromNode(node)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        const Tensor* sum = optionalInputTensor(inputs, 3);
        ConvProblem pr = forwardProblem(attrs_, groups_, x, w);
        checkBias(bias, pr.outChannels);
        const Shape shape = forwardOutputShape(pr);
        require(!sum || (sum->shape() == shape && sum->dtype() == x.dtype()), [&] {
            return "the summed input Z must have the output's type and shape " +
                   shapeToString(shape);
        });
        // Z in the type the product is computed in (float for the 16-bit types).
        Tensor z;
        if (sum)
            z = sum->dtype() == DataType::Float || sum->dtype() == DataType::Double
                    ? *sum
                    : sum->castTo(DataType::Float);
        Tensor y = computeInFloatingType(
            x, w, bias, shape, [&]<class T>(const T* xd, const T* wd, const T* bd, T* yd) {
                const T* zd = sum ? z.data<T>() : nullptr;
                if constexpr (std::is_same_v<T, float>) {
                    if (runOnDnnl(dnnl_, pr, xd, w, bd, yd, ConvEpilogue{zd, activation_})) return;
                }
                convolve(ctx.pool(), pr, xd, wd, bd, yd);
                if (zd || !activation_.none())
                    addAndActivate(ctx.pool(), yd, zd, shapeElementCount(shape));
            });
        outputs[0] = Value(std::move(y));
    }

  private:
    template <class T>
    void addAndActivate(ThreadPool& pool, T* y, const T* z, std::int64_t count) const {
        pool.parallelFor(count, 4.0, [&](std::int64_t begin, std::int64_t end) {
            if (z)
                for (std::int64_t i = begin; i < end; ++i) y[i] += z[i];
            activation_.applyInPlace(y + begin, end - begin);
        });
    }

    WindowAttributes attrs_;
    std::int64_t groups_;
    FusedActivation activation_;
    // float only: double keeps the Eigen path exercised in builds that have oneDNN.
    DnnlConvolution dnnl_{false};
};

// com.onnxlens BlockedConv: FusedConv on channel-blocked data (ChannelBlockedLayout.h), written
// by the optimizer's convertToChannelBlockedLayout; attribute `block`, the rest as FusedConv.
// X is blocked, or plain [N, C, H, W] for a network's first convolution (oneDNN reads a few
// plain channels directly); Z and Y are blocked. Without oneDNN, or for a problem it does not
// take, the plain FusedConv computes it between layout conversions.
class BlockedConvKernel : public Kernel {
  public:
    explicit BlockedConvKernel(const NodeInfo& node)
        : attrs_(node),
          groups_(node.getInt("group", 1)),
          block_(node.getInt("block")),
          activation_(FusedActivation::fromNode(node)),
          plain_(node) {
        require(block_ == 8 || block_ == 16,
                [&] { return "block must be 8 or 16, got " + std::to_string(block_); });
        require(groups_ > 0, "group must be positive");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        const Tensor* sum = optionalInputTensor(inputs, 3);
        require(x.dtype() == DataType::Float && w.dtype() == DataType::Float, [&] {
            return std::string("BlockedConv computes in float, got X ") + dataTypeName(x.dtype()) +
                   " and W " + dataTypeName(w.dtype());
        });
        require(w.rank() == 4, [&] {
            return "BlockedConv weights must be [M, C/group, kH, kW], got " +
                   shapeToString(w.shape());
        });
        const bool blockedInput = x.rank() == 5;
        require(blockedInput || x.rank() == 4, [&] {
            return "X must be blocked [N, Cb, H, W, b] or plain [N, C, H, W], got " +
                   shapeToString(x.shape());
        });
        if (blockedInput && x.dim(4) != block_)
            fail("X's channel block " + std::to_string(x.dim(4)) + " is not the node's block " +
                 std::to_string(block_));
        const std::int64_t inChannels = w.dim(1) * groups_;
        const Shape xShape = blockedInput ? plainShapeOfBlocked(x, inChannels) : x.shape();
        const ConvProblem pr = forwardProblem(attrs_, groups_, xShape, w);
        checkBias(bias, pr.outChannels);
        Shape yShape{pr.batch, channelBlocks(pr.outChannels, block_)};
        // The output dims straight from the geometry (a range-for over outputShape()'s temporary
        // drew gcc 12's false -Wfree-nonheap-object).
        const WindowGeometry& g = pr.geometry;
        for (int s = kMaxWindowRank - g.spatialRank; s < kMaxWindowRank; ++s)
            yShape.push_back(g.output[static_cast<std::size_t>(s)]);
        yShape.push_back(block_);
        require(!sum || (sum->dtype() == DataType::Float && sum->shape() == yShape), [&] {
            return "the summed input Z must be float with the blocked output shape " +
                   shapeToString(yShape);
        });
#ifdef ONNXLENS_WITH_DNNL
        const DnnlConvolution::Layouts layouts{blockedInput ? block_ : 0, block_};
        if (dnnl_.supports(pr, layouts)) {
            // Y in Z's own buffer where nothing else sees Z (a residual block's shortcut, read
            // last here): the sum post-op then adds in place, with no copy of Z first.
            std::optional<Tensor> reused = sum ? reusableInputTensor(ctx, inputs, 3) : std::nullopt;
            Tensor y = reused ? std::move(*reused) : Tensor(DataType::Float, yShape);
            const float* z = sum ? sum->data<float>() : nullptr;
            dnnl_.run(pr, x.data<float>(), w, bias ? bias->data<float>() : nullptr, y.data<float>(),
                      ConvEpilogue{z, activation_}, layouts);
            outputs[0] = Value(std::move(y));
            return;
        }
#endif
        const Value xPlain(blockedInput ? fromChannelBlocked(ctx.pool(), x, inChannels) : x);
        const Value zPlain(sum ? fromChannelBlocked(ctx.pool(), *sum, pr.outChannels) : Tensor());
        const std::vector<const Value*> plainInputs{
            &xPlain, inputs[1], inputs.size() > 2 ? inputs[2] : nullptr, sum ? &zPlain : nullptr};
        std::vector<Value> plainOutputs(1);
        plain_.run(ctx, plainInputs, plainOutputs);
        outputs[0] = Value(toChannelBlocked(ctx.pool(), plainOutputs[0].tensor(), block_));
    }

  private:
    WindowAttributes attrs_;
    std::int64_t groups_, block_;
    FusedActivation activation_;
    ConvKernel plain_;
    DnnlConvolution dnnl_{false};
};

class ConvTransposeKernel : public Kernel {
  public:
    explicit ConvTransposeKernel(const NodeInfo& node)
        : attrs_(node),
          groups_(node.getInt("group", 1)),
          outputPadding_(node.getInts("output_padding")),
          outputShape_(node.getInts("output_shape")) {
        require(groups_ > 0, "group must be positive");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        require(x.rank() >= 3, [&] {
            return "input X must have rank >= 3 (N, C, spatial...), got " +
                   shapeToString(x.shape());
        });
        require(w.rank() == x.rank(), [&] {
            return "weights W " + shapeToString(w.shape()) + " must have the rank of X " +
                   shapeToString(x.shape());
        });
        ConvProblem pr;
        pr.batch = x.dim(0);
        pr.inChannels = x.dim(1);
        pr.groups = groups_;
        pr.outChannels = w.dim(1) * groups_;
        require(w.dim(0) == pr.inChannels, [&] {
            return "W.shape[0] " + std::to_string(w.dim(0)) + " must equal the input channels " +
                   std::to_string(pr.inChannels);
        });
        require(pr.inChannels % groups_ == 0, "input channels are not divisible by group");
        checkBias(bias, pr.outChannels);
        pr.geometry = makeWindowGeometry(attrs_, spatialDims(x), kernelShapeOf(attrs_, w));
        resolveGeometry(pr.geometry);
        Shape shape{pr.batch, pr.outChannels};
        for (auto d : pr.geometry.outputShape()) shape.push_back(d);
        outputs[0] = computeInFloatingType(
            x, w, bias, shape, [&]<class T>(const T* xd, const T* wd, const T* bd, T* yd) {
                if (!runOnDnnl(dnnl_, pr, xd, w, bd, yd))
                    convolveTransposed(ctx.pool(), pr, xd, wd, bd, yd);
            });
    }

  private:
    void resolveGeometry(WindowGeometry& g) const {
        using window_detail::floorDiv;
        const int rank = g.spatialRank, offset = kMaxWindowRank - rank;
        require(outputPadding_.empty() || static_cast<int>(outputPadding_.size()) == rank,
                "output_padding must have one value per spatial dim");
        // output_shape may be given with or without the leading N and C.
        std::vector<std::int64_t> requested = outputShape_;
        if (static_cast<int>(requested.size()) == rank + 2)
            requested.erase(requested.begin(), requested.begin() + 2);
        require(requested.empty() || static_cast<int>(requested.size()) == rank,
                "output_shape must have one value per spatial dim");
        for (int i = 0; i < rank; ++i) {
            const int s = offset + i;
            const std::int64_t extent = (g.kernel[s] - 1) * g.dilation[s] + 1;
            const std::int64_t extra = outputPadding_.empty() ? 0 : outputPadding_[i];
            const std::int64_t natural = g.stride[s] * (g.input[s] - 1) + extra + extent;
            std::int64_t out = -1;
            if (!requested.empty())
                out = requested[i];
            else if (attrs_.autoPad == AutoPad::SameUpper || attrs_.autoPad == AutoPad::SameLower)
                out = g.input[s] * g.stride[s];
            if (out >= 0) {
                const std::int64_t total = natural - out;
                if (attrs_.autoPad == AutoPad::SameUpper) {
                    g.padBegin[s] = floorDiv(total, 2);
                    g.padEnd[s] = total - g.padBegin[s];
                } else {
                    g.padEnd[s] = floorDiv(total, 2);
                    g.padBegin[s] = total - g.padEnd[s];
                }
            } else {
                if (attrs_.autoPad == AutoPad::Valid) g.padBegin[s] = g.padEnd[s] = 0;
                out = natural - g.padBegin[s] - g.padEnd[s];
            }
            require(out >= 0, "ConvTranspose output size would be negative");
            g.output[s] = out;
        }
    }

    WindowAttributes attrs_;
    std::int64_t groups_;
    std::vector<std::int64_t> outputPadding_, outputShape_;
    DnnlConvolution dnnl_{true};
};

// Reads a zero point (scalar, [1] or per-channel [channels]) of any 8-bit type as int32 values.
std::vector<std::int32_t> zeroPoints(const Tensor* zp, std::int64_t channels, const char* name) {
    if (!zp) return std::vector<std::int32_t>(1, 0);
    require(zp->numel() == 1 || (zp->rank() == 1 && zp->dim(0) == channels), [&] {
        return std::string(name) + " must be a scalar or have one value per channel, got " +
               shapeToString(zp->shape());
    });
    std::vector<std::int32_t> values(static_cast<std::size_t>(zp->numel()));
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<std::int32_t>(zp->valueAsInt64(static_cast<std::int64_t>(i)));
    return values;
}

// An 8-bit tensor minus its zero point (per slice of `sliceSize` elements when per-channel).
Tensor centered(const Tensor& t, const std::vector<std::int32_t>& zp, std::int64_t sliceSize,
                const char* name) {
    require(t.dtype() == DataType::UInt8 || t.dtype() == DataType::Int8, [&] {
        return std::string(name) + " must be uint8 or int8, got " + dataTypeName(t.dtype());
    });
    Tensor out(DataType::Int32, t.shape());
    std::int32_t* o = out.data<std::int32_t>();
    auto fill = [&]<class T>(const T* in) {
        for (std::int64_t i = 0; i < t.numel(); ++i) {
            const std::size_t slice = zp.size() == 1 ? 0 : static_cast<std::size_t>(i / sliceSize);
            o[i] = static_cast<std::int32_t>(in[i]) - zp[slice];
        }
    };
    if (t.dtype() == DataType::UInt8)
        fill(t.data<std::uint8_t>());
    else
        fill(t.data<std::int8_t>());
    return out;
}

void checkZeroPointType(const Tensor* zp, const Tensor& t, const char* name) {
    require(!zp || zp->dtype() == t.dtype(),
            [&] { return std::string(name) + " must have the element type of its tensor"; });
}

// The int32 accumulators of an integer convolution: sum((x - xzp) * (w - wzp)) + bias.
Tensor integerConvolution(ThreadPool& pool, const ConvProblem& pr, const Tensor& x,
                          const Tensor* xZeroPoint, const Tensor& w, const Tensor* wZeroPoint,
                          const Tensor* bias) {
    checkZeroPointType(xZeroPoint, x, "x_zero_point");
    checkZeroPointType(wZeroPoint, w, "w_zero_point");
    Tensor xc = centered(x, zeroPoints(xZeroPoint, 1, "x_zero_point"), x.numel(), "x");
    const std::int64_t perChannel = pr.outChannels ? w.numel() / pr.outChannels : 1;
    Tensor wc =
        centered(w, zeroPoints(wZeroPoint, pr.outChannels, "w_zero_point"), perChannel, "w");
    if (bias) {
        checkBias(bias, pr.outChannels);
        require(bias->dtype() == DataType::Int32, "bias B must be int32");
    }
    Tensor y(DataType::Int32, forwardOutputShape(pr));
    convolve(pool, pr, xc.data<std::int32_t>(), wc.data<std::int32_t>(),
             bias ? bias->data<std::int32_t>() : nullptr, y.data<std::int32_t>());
    return y;
}

// The activation zero point when the problem fits DnnlInt8Conv (x uint8/int8 with one zero point
// of its type, w int8 with zero points 0), else nothing. Types are checked first, so that both
// paths refuse the same inputs.
std::optional<std::int32_t> int8ConvZeroPoint(const Tensor& x, const Tensor* xZeroPoint,
                                              const Tensor& w, const Tensor* wZeroPoint) {
    checkZeroPointType(xZeroPoint, x, "x_zero_point");
    checkZeroPointType(wZeroPoint, w, "w_zero_point");
    if (w.dtype() != DataType::Int8) return std::nullopt;
    if (x.dtype() != DataType::UInt8 && x.dtype() != DataType::Int8) return std::nullopt;
    if (wZeroPoint) {
        // int8 (checked above): every byte 0.
        const auto* bytes = static_cast<const std::uint8_t*>(wZeroPoint->raw());
        if (std::any_of(bytes, bytes + wZeroPoint->numel(), [](std::uint8_t b) { return b != 0; }))
            return std::nullopt;
    }
    if (!xZeroPoint) return 0;
    if (xZeroPoint->numel() != 1) return std::nullopt;
    return static_cast<std::int32_t>(xZeroPoint->valueAsInt64(0));
}

class ConvIntegerKernel : public Kernel {
  public:
    explicit ConvIntegerKernel(const NodeInfo& node)
        : attrs_(node), groups_(node.getInt("group", 1)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor* xZeroPoint = optionalInputTensor(inputs, 2);
        const Tensor* wZeroPoint = optionalInputTensor(inputs, 3);
        ConvProblem pr = forwardProblem(attrs_, groups_, x, w);
        if (const auto z = int8ConvZeroPoint(x, xZeroPoint, w, wZeroPoint)) {
            Tensor y(DataType::Int32, forwardOutputShape(pr));
            if (dnnl_.run(ctx.pool(), pr, x, *z, w, Int8ConvEpilogue{}, y)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        outputs[0] = integerConvolution(ctx.pool(), pr, x, xZeroPoint, w, wZeroPoint, nullptr);
    }

  private:
    WindowAttributes attrs_;
    std::int64_t groups_;
    DnnlInt8Conv dnnl_;
};

// An 8-bit [N, H, W, C] tensor as [N, C, H, W] (toChannelsLast false: the reverse). The
// channels-last QLinearConv's way to the plain computation when oneDNN's path does not take it.
Tensor moveChannels(const Tensor& t, bool toChannelsLast) {
    require(t.dtype() == DataType::UInt8 || t.dtype() == DataType::Int8,
            "a channels-last tensor must be uint8 or int8");
    const Shape& s = t.shape();
    const std::int64_t n = s[0], c = toChannelsLast ? s[1] : s[3];
    const std::int64_t plane = toChannelsLast ? s[2] * s[3] : s[1] * s[2];
    Tensor out(t.dtype(),
               toChannelsLast ? Shape{s[0], s[2], s[3], s[1]} : Shape{s[0], s[3], s[1], s[2]});
    const auto* in = static_cast<const std::uint8_t*>(t.raw());
    auto* o = static_cast<std::uint8_t*>(out.raw());
    for (std::int64_t b = 0; b < n; ++b) {
        if (toChannelsLast)
            transposeBytes(in + b * c * plane, c, plane, plane, o + b * c * plane, c);
        else
            transposeBytes(in + b * c * plane, plane, c, c, o + b * c * plane, plane);
    }
    return out;
}

// QLinearConv, and the optimizer's com.onnxlens QLinearConvChannelsLast (same inputs and
// attributes; 2-D only, X [N, H, W, C] and Y [N, OH, OW, M]: a chain of 8-bit convolutions then
// never changes layout between its layers).
class QLinearConvKernel : public Kernel {
  public:
    explicit QLinearConvKernel(const NodeInfo& node, bool channelsLast = false)
        : attrs_(node), groups_(node.getInt("group", 1)), channelsLast_(channelsLast) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& given = inputTensor(inputs, 0);
        if (channelsLast_)
            require(given.rank() == 4, [&] {
                return "QLinearConvChannelsLast: X must be [N, H, W, C], got " +
                       shapeToString(given.shape());
            });
        const Tensor& xScale = inputTensor(inputs, 1);
        const Tensor* xZeroPoint = optionalInputTensor(inputs, 2);
        const Tensor& w = inputTensor(inputs, 3);
        const Tensor& wScale = inputTensor(inputs, 4);
        const Tensor* wZeroPoint = optionalInputTensor(inputs, 5);
        const Tensor& yScale = inputTensor(inputs, 6);
        const Tensor* yZeroPoint = optionalInputTensor(inputs, 7);
        const Tensor* bias = optionalInputTensor(inputs, 8);
        const Shape& gs = given.shape();
        ConvProblem pr = forwardProblem(attrs_, groups_,
                                        channelsLast_ ? Shape{gs[0], gs[3], gs[1], gs[2]} : gs, w);
        require(xScale.numel() == 1 && yScale.numel() == 1, "x_scale and y_scale must be scalars");
        require(wScale.numel() == 1 || wScale.numel() == pr.outChannels,
                "w_scale must be a scalar or have one value per output channel");
        const DataType outType = yZeroPoint ? yZeroPoint->dtype() : given.dtype();
        require(outType == DataType::UInt8 || outType == DataType::Int8,
                "y_zero_point must be uint8 or int8");
        const std::vector<std::int32_t> yzp = zeroPoints(yZeroPoint, 1, "y_zero_point");
        require(yzp.size() == 1, "y_zero_point must be a scalar");
        const std::vector<float>& multiplier = multipliers(xScale, wScale, yScale);

        if (const auto z = int8ConvZeroPoint(given, xZeroPoint, w, wZeroPoint)) {
            if (bias) {
                checkBias(bias, pr.outChannels);
                require(bias->dtype() == DataType::Int32, "bias B must be int32");
            }
            Int8ConvEpilogue epilogue;
            epilogue.output = Int8ConvEpilogue::Output::Quantized;
            epilogue.intBias = bias ? bias->data<std::int32_t>() : nullptr;
            epilogue.scale = multiplier.data();
            epilogue.scaleCount = static_cast<std::int64_t>(multiplier.size());
            epilogue.outputZeroPoint = yzp[0];
            Shape yShape = forwardOutputShape(pr);
            if (channelsLast_) yShape = {yShape[0], yShape[2], yShape[3], yShape[1]};
            Tensor y(outType, yShape);
            if (dnnl_.run(ctx.pool(), pr, given, *z, w, epilogue, y, channelsLast_)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        const Tensor x = channelsLast_ ? moveChannels(given, false) : given;
        Tensor acc = integerConvolution(ctx.pool(), pr, x, xZeroPoint, w, wZeroPoint, bias);
        const std::int64_t plane = pr.geometry.outputSize();
        Tensor y(outType, acc.shape());
        const std::int32_t* a = acc.data<std::int32_t>();
        auto requantize = [&]<class Q>(Q* out) {
            const double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
            for (std::int64_t i = 0; i < acc.numel(); ++i) {
                const std::int64_t channel =
                    (i / std::max<std::int64_t>(plane, 1)) % pr.outChannels;
                // Scale in float as the reference does, then round half to even.
                const float scaled =
                    static_cast<float>(a[i]) * multiplier[multiplier.size() == 1 ? 0 : channel];
                const double q = std::nearbyint(static_cast<double>(scaled)) + yzp[0];
                out[i] = static_cast<Q>(std::clamp(q, lo, hi));
            }
        };
        if (outType == DataType::UInt8)
            requantize(y.data<std::uint8_t>());
        else
            requantize(y.data<std::int8_t>());
        outputs[0] = Value(channelsLast_ ? moveChannels(y, true) : y);
    }

  private:
    // The requantization multiplier of each output channel: (x_scale * w_scale) / y_scale in
    // float, as ONNX Runtime computes it (one rounded from the double quotient can differ by an
    // ulp and move a product that lands on a .5 to the other side). Kept while the same three
    // scale tensors (initializers, in quantized models) come back.
    const std::vector<float>& multipliers(const Tensor& xScale, const Tensor& wScale,
                                          const Tensor& yScale) {
        if (!multiplier_.empty() && xScale.sharesStorageWith(heldScales_[0]) &&
            wScale.sharesStorageWith(heldScales_[1]) && yScale.sharesStorageWith(heldScales_[2]))
            return multiplier_;
        const double xs = xScale.valueAsDouble(0), ys = yScale.valueAsDouble(0);
        multiplier_.resize(static_cast<std::size_t>(wScale.numel()));
        for (std::size_t m = 0; m < multiplier_.size(); ++m) {
            const float product =
                static_cast<float>(xs) *
                static_cast<float>(wScale.valueAsDouble(static_cast<std::int64_t>(m)));
            multiplier_[m] = product / static_cast<float>(ys);
        }
        heldScales_ = {xScale, wScale, yScale};
        return multiplier_;
    }

    WindowAttributes attrs_;
    std::int64_t groups_;
    bool channelsLast_;
    DnnlInt8Conv dnnl_;
    std::vector<float> multiplier_;
    std::array<Tensor, 3> heldScales_;
};

class QLinearConvChannelsLastKernel : public QLinearConvKernel {
  public:
    explicit QLinearConvChannelsLastKernel(const NodeInfo& node) : QLinearConvKernel(node, true) {}
};

// com.onnxlens ConvIntegerToFloat (the optimizer's fusion of what dynamic quantizers write:
// ConvInteger -> Cast to float -> Mul by the scales [-> Add bias] [-> activation], and of QDQ
// pairs around a float Conv): inputs X, W, x_scale, w_scale (optional), x_zero_point,
// w_zero_point, B (optional), the Conv attributes and `activation`;
// Y = activation(float(ConvInteger(X, W, x_zp, w_zp)) * (x_scale * w_scale[m]) + B[m]), the
// scales one value or one per output channel (any shape of that many values, [M, 1, 1] too),
// multiplied in float as the unfused graph's Mul does.
class ConvIntegerToFloatKernel : public Kernel {
  public:
    explicit ConvIntegerToFloatKernel(const NodeInfo& node)
        : attrs_(node),
          groups_(node.getInt("group", 1)),
          activation_(FusedActivation::fromNode(node)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor* xZeroPoint = optionalInputTensor(inputs, 4);
        const Tensor* wZeroPoint = optionalInputTensor(inputs, 5);
        const Tensor* bias = optionalInputTensor(inputs, 6);
        ConvProblem pr = forwardProblem(attrs_, groups_, x, w);
        const std::int64_t M = pr.outChannels;
        auto values = [&](const Tensor& t, const char* name) {
            require(t.dtype() == DataType::Float && (t.numel() == 1 || t.numel() == M), [&] {
                return std::string("ConvIntegerToFloat: ") + name +
                       " must be float, one value or one per output channel";
            });
            return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
        };
        std::vector<float> scale = values(inputTensor(inputs, 2), "x_scale");
        if (const Tensor* wScale = optionalInputTensor(inputs, 3)) {
            const std::vector<float> b = values(*wScale, "w_scale");
            std::vector<float> product(std::max(scale.size(), b.size()));
            for (std::size_t m = 0; m < product.size(); ++m)
                product[m] = scale[scale.size() == 1 ? 0 : m] * b[b.size() == 1 ? 0 : m];
            scale = std::move(product);
        }
        require(!bias || (bias->dtype() == DataType::Float && bias->numel() == M), [&] {
            return "ConvIntegerToFloat: the bias must be " + std::to_string(M) + " floats";
        });
        const float* biasData = bias ? bias->data<float>() : nullptr;
        Tensor y(DataType::Float, forwardOutputShape(pr));
        if (const auto z = int8ConvZeroPoint(x, xZeroPoint, w, wZeroPoint)) {
            Int8ConvEpilogue epilogue;
            epilogue.output = Int8ConvEpilogue::Output::Float;
            epilogue.scale = scale.data();
            epilogue.scaleCount = static_cast<std::int64_t>(scale.size());
            epilogue.bias = biasData;
            epilogue.activation = activation_;
            if (dnnl_.run(ctx.pool(), pr, x, *z, w, epilogue, y)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        const Tensor acc =
            integerConvolution(ctx.pool(), pr, x, xZeroPoint, w, wZeroPoint, nullptr);
        const std::int32_t* in = acc.data<std::int32_t>();
        float* out = y.data<float>();
        const std::int64_t plane = pr.geometry.outputSize();
        ctx.pool().parallelFor(pr.batch * M, 4.0 * static_cast<double>(plane),
                               [&](std::int64_t begin, std::int64_t end) {
                                   for (std::int64_t item = begin; item < end; ++item) {
                                       const auto m = static_cast<std::size_t>(item % M);
                                       const float s = scale[scale.size() == 1 ? 0 : m];
                                       float* o = out + item * plane;
                                       for (std::int64_t p = 0; p < plane; ++p) {
                                           const float v =
                                               static_cast<float>(in[item * plane + p]) * s;
                                           o[p] = biasData ? v + biasData[m] : v;
                                       }
                                       activation_.applyInPlace(o, plane);
                                   }
                               });
        outputs[0] = Value(std::move(y));
    }

  private:
    WindowAttributes attrs_;
    std::int64_t groups_;
    FusedActivation activation_;
    DnnlInt8Conv dnnl_;
};

}  // namespace

void registerConvOps(KernelRegistry& registry) {
    registry.add<ConvKernel>("Conv", 1);
    registry.add<ConvKernel>("FusedConv", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<ConvKernel>("FusedConv", 1, kLatestOpset, "com.microsoft");
    registry.add<BlockedConvKernel>("BlockedConv", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<ConvTransposeKernel>("ConvTranspose", 1);
    registry.add<ConvIntegerKernel>("ConvInteger", 10);
    registry.add<QLinearConvKernel>("QLinearConv", 10);
    registry.add<QLinearConvChannelsLastKernel>("QLinearConvChannelsLast", 1, kLatestOpset,
                                                kOnnxlensDomain);
    registry.add<ConvIntegerToFloatKernel>("ConvIntegerToFloat", 1, kLatestOpset, kOnnxlensDomain);
}

}  // namespace onnxlens::engine::ops
