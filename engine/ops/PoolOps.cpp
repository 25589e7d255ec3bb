// Pooling: MaxPool (with Indices), AveragePool, LpPool, their Global forms, MaxUnpool and
// MaxRoiPool. Windows follow the convolution geometry (ConvGeometry.h); planes (n, c) are split
// over the thread pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ChannelBlockedLayout.h"
#include "ConvGeometry.h"
#include "OpFamilies.h"
#include "PoolWindows.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {

namespace {

void requireImageInput(const Tensor& x, const char* op) {
    require(x.rank() >= 3, [&] {
        return std::string(op) + " input must have rank >= 3 (N, C, spatial...), got " +
               shapeToString(x.shape());
    });
}

// Splits planes (n, c) over the pool and calls `plane(index)` for each.
template <class Plane>
void forEachPlane(ThreadPool& pool, std::int64_t planes, const WindowGeometry& g, Plane&& plane) {
    pool.parallelFor(planes, static_cast<double>(g.outputSize() * g.kernelSize()),
                     [&](std::int64_t begin, std::int64_t end) {
                         for (std::int64_t p = begin; p < end; ++p) plane(p);
                     });
}

// The pooled output shape [N, C, out...] of a windowed pool and its geometry.
struct PoolProblem {
    WindowGeometry geometry;
    Shape outputShape;
    std::int64_t planes = 0;
};

PoolProblem poolProblem(const WindowAttributes& attrs, const Tensor& x, const char* op) {
    requireImageInput(x, op);
    require(!attrs.kernelShape.empty(), [&] { return std::string(op) + " requires kernel_shape"; });
    PoolProblem pr;
    pr.geometry = makeWindowGeometry(attrs, spatialDims(x), attrs.kernelShape);
    resolveForwardWindow(pr.geometry, attrs.autoPad, attrs.ceilMode);
    pr.outputShape = {x.dim(0), x.dim(1)};
    for (auto d : pr.geometry.outputShape()) pr.outputShape.push_back(d);
    pr.planes = x.dim(0) * x.dim(1);
    return pr;
}

// Row-major (0) or column-major (1) flat index of a row-major spatial offset, as MaxPool's
// storage_order asks.
std::int64_t storageIndex(std::int64_t offset, const WindowGeometry& g, bool columnMajor) {
    if (!columnMajor) return offset;
    const std::int64_t x = offset % g.input[2], y = (offset / g.input[2]) % g.input[1],
                       z = offset / (g.input[2] * g.input[1]);
    return z + g.input[0] * (y + g.input[1] * x);
}

class MaxPoolKernel : public Kernel {
  public:
    explicit MaxPoolKernel(const NodeInfo& node)
        : attrs_(node), columnMajor_(node.getInt("storage_order", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        PoolProblem pr = poolProblem(attrs_, x, "MaxPool");
        const WindowGeometry& g = pr.geometry;
        const bool wantIndices = outputs.size() > 1;
        if (!wantIndices && x.dtype() == DataType::Float && g.spatialRank == 2 &&
            g.dilation[1] == 1 && g.dilation[2] == 1) {
            outputs[0] = Value(maxPoolRows(ctx.pool(), x, pr));
            return;
        }
        Tensor indices = wantIndices ? Tensor(DataType::Int64, pr.outputShape) : Tensor();
        std::int64_t* idx = wantIndices ? indices.data<std::int64_t>() : nullptr;
        Tensor y = dispatchNumeric(x.dtype(), [&]<class T>() {
            Tensor out(x.dtype(), pr.outputShape);
            const T* in = x.data<T>();
            T* o = out.data<T>();
            forEachPlane(ctx.pool(), pr.planes, g, [&](std::int64_t p) {
                const T* plane = in + p * g.inputSize();
                T* planeOut = o + p * g.outputSize();
                forEachWindow(g, [&](std::int64_t i, const std::int64_t* taps, std::int64_t count,
                                     std::int64_t) {
                    T best = std::numeric_limits<T>::lowest();
                    if constexpr (std::numeric_limits<T>::has_infinity)
                        best = -std::numeric_limits<T>::infinity();
                    std::int64_t where = count ? taps[0] : 0;
                    for (std::int64_t t = 0; t < count; ++t)
                        if (plane[taps[t]] > best) best = plane[taps[t]], where = taps[t];
                    planeOut[i] = best;
                    if (idx)
                        idx[p * g.outputSize() + i] =
                            p * g.inputSize() + storageIndex(where, g, columnMajor_);
                });
            });
            return out;
        });
        outputs[0] = Value(y);
        if (wantIndices) outputs[1] = Value(indices);
    }

  private:
    // 2-D float MaxPool without indices, dilation 1 (a CNN's stem pool when the convolutions
    // around it are not on the channel-blocked path): per output row, each window row's values
    // folded into the row of maxima for all output columns at once (a vector loop over the
    // columns), not a list of taps per output. The same values: the first maximum, a NaN never
    // taken, -inf for a window all in the padding.
    static Tensor maxPoolRows(ThreadPool& pool, const Tensor& x, const PoolProblem& pr) {
        const WindowGeometry& g = pr.geometry;
        Tensor out(DataType::Float, pr.outputShape);
        const float* in = x.data<float>();
        float* o = out.data<float>();
        const std::int64_t IH = g.input[1], IW = g.input[2], OH = g.output[1], OW = g.output[2];
        const std::int64_t KH = g.kernel[1], KW = g.kernel[2], SH = g.stride[1], SW = g.stride[2];
        const std::int64_t top = g.padBegin[1], left = g.padBegin[2];
        if (out.numel() == 0) return out;
        // Only the taps that can land inside the input: a hostile kernel of millions of columns
        // over a few padded ones (an empty output) looped over all of them for every row.
        const std::int64_t kxBegin = std::max<std::int64_t>(0, left - (OW - 1) * SW);
        const std::int64_t kxEnd = std::min(KW, left + IW);
        forEachPlane(pool, pr.planes, g, [&](std::int64_t p) {
            const float* plane = in + p * IH * IW;
            for (std::int64_t oy = 0; oy < OH; ++oy) {
                float* __restrict__ best = o + (p * OH + oy) * OW;
                std::fill(best, best + OW, -std::numeric_limits<float>::infinity());
                const std::int64_t kyBegin = std::max<std::int64_t>(0, top - oy * SH);
                const std::int64_t kyEnd = std::min(KH, top - oy * SH + IH);
                for (std::int64_t ky = kyBegin; ky < kyEnd; ++ky) {
                    const std::int64_t iy = oy * SH - top + ky;
                    const float* __restrict__ row = plane + iy * IW;
                    for (std::int64_t kx = kxBegin; kx < kxEnd; ++kx) {
                        // The columns whose tap kx lands inside the row: ox * SW - left + kx in
                        // [0, IW).
                        const std::int64_t shift = kx - left;
                        const std::int64_t first = shift >= 0 ? 0 : (-shift + SW - 1) / SW;
                        const std::int64_t last =
                            IW - 1 - shift < 0 ? -1 : std::min(OW - 1, (IW - 1 - shift) / SW);
                        for (std::int64_t ox = first; ox <= last; ++ox) {
                            const float v = row[ox * SW + shift];
                            best[ox] = v > best[ox] ? v : best[ox];
                        }
                    }
                }
            }
        });
        return out;
    }

    WindowAttributes attrs_;
    bool columnMajor_;
};

// AveragePool and LpPool: a sum over the window turned into the output by `finish`; `power`
// 0 sums the values themselves, p > 0 sums |x|^p.
template <class Finish>
Tensor sumPool(ThreadPool& pool, const Tensor& x, const PoolProblem& pr, double power,
               Finish&& finish) {
    return dispatchFloat(x.dtype(), [&]<class T>() {
        const WindowGeometry& g = pr.geometry;
        Tensor out(x.dtype(), pr.outputShape);
        const T* in = x.data<T>();
        T* o = out.data<T>();
        forEachPlane(pool, pr.planes, g, [&](std::int64_t p) {
            const T* plane = in + p * g.inputSize();
            T* planeOut = o + p * g.outputSize();
            forEachWindow(g, [&](std::int64_t i, const std::int64_t* taps, std::int64_t count,
                                 std::int64_t padded) {
                double sum = 0;
                for (std::int64_t t = 0; t < count; ++t) {
                    const double v = toDouble(plane[taps[t]]);
                    sum += power == 0 ? v : power == 2 ? v * v : std::pow(std::abs(v), power);
                }
                planeOut[i] = static_cast<T>(finish(sum, count, padded));
            });
        });
        return out;
    });
}

class AveragePoolKernel : public Kernel {
  public:
    explicit AveragePoolKernel(const NodeInfo& node)
        : attrs_(node), countIncludePad_(node.getInt("count_include_pad", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        PoolProblem pr = poolProblem(attrs_, x, "AveragePool");
        outputs[0] = sumPool(ctx.pool(), x, pr, 0.0,
                             [&](double sum, std::int64_t count, std::int64_t padded) {
                                 const std::int64_t divisor = countIncludePad_ ? padded : count;
                                 return divisor ? sum / static_cast<double>(divisor) : 0.0;
                             });
    }

  private:
    WindowAttributes attrs_;
    bool countIncludePad_;
};

// LpPool-1 has a float p; later opsets an int.
double lpPower(const NodeInfo& node) {
    const auto* a = node.find("p");
    if (!a) return 2.0;
    const double p =
        a->type() == onnx::AttributeProto::FLOAT ? a->f() : static_cast<double>(a->i());
    require(p > 0, "LpPool: p must be positive");
    return p;
}

double lpFinish(double sum, double p) { return p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p); }

class LpPoolKernel : public Kernel {
  public:
    explicit LpPoolKernel(const NodeInfo& node) : attrs_(node), p_(lpPower(node)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        PoolProblem pr = poolProblem(attrs_, x, "LpPool");
        outputs[0] = sumPool(ctx.pool(), x, pr, p_, [&](double sum, std::int64_t, std::int64_t) {
            return lpFinish(sum, p_);
        });
    }

  private:
    WindowAttributes attrs_;
    double p_;
};

// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one value per (n, c) over all spatial dims.
enum class GlobalPooling { Average, Max, Lp };

class GlobalPoolKernel : public Kernel {
  public:
    GlobalPoolKernel(const NodeInfo& node, GlobalPooling kind)
        : kind_(kind), p_(kind == GlobalPooling::Lp ? lpPower(node) : 1.0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() >= 2, [&] {
            return "global pooling input must have rank >= 2 (N, C, ...), got " +
                   shapeToString(x.shape());
        });
        Shape outShape = x.shape();
        for (std::size_t i = 2; i < outShape.size(); ++i) outShape[i] = 1;
        const std::int64_t planes = x.dim(0) * x.dim(1);
        const std::int64_t size = planes ? x.numel() / planes : 0;
        auto compute = [&]<class T>() {
            Tensor out(x.dtype(), outShape);
            const T* in = x.data<T>();
            T* o = out.data<T>();
            ctx.pool().parallelFor(
                planes, static_cast<double>(size), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t p = b; p < e; ++p) {
                        const T* plane = in + p * size;
                        if (kind_ == GlobalPooling::Max) {
                            T best = size ? plane[0] : T(0);
                            for (std::int64_t i = 1; i < size; ++i)
                                if (plane[i] > best) best = plane[i];
                            o[p] = best;
                            continue;
                        }
                        double sum = 0;
                        for (std::int64_t i = 0; i < size; ++i) {
                            const double v = toDouble(plane[i]);
                            sum += kind_ == GlobalPooling::Average ? v : std::pow(std::abs(v), p_);
                        }
                        o[p] = static_cast<T>(kind_ == GlobalPooling::Average
                                                  ? (size ? sum / static_cast<double>(size) : 0.0)
                                                  : lpFinish(sum, p_));
                    }
                });
            return out;
        };
        outputs[0] = kind_ == GlobalPooling::Max ? dispatchNumeric(x.dtype(), compute)
                                                 : dispatchFloat(x.dtype(), compute);
    }

  private:
    GlobalPooling kind_;
    double p_;
};

template <GlobalPooling Kind>
class GlobalPoolOf : public GlobalPoolKernel {
  public:
    explicit GlobalPoolOf(const NodeInfo& node) : GlobalPoolKernel(node, Kind) {}
};

// com.onnxlens BlockedMaxPool, BlockedAveragePool and BlockedGlobalAveragePool: the pools on
// channel-blocked data (ChannelBlockedLayout.h) inside a blocked Conv chain, written by the
// optimizer's convertToChannelBlockedLayout; attributes as the plain ops. A window position
// holds one channel block's lanes contiguously, so each tap is one vector operation.
enum class BlockedPooling { Max, Average, GlobalAverage };

// A channel block's lanes as one vector (GCC's vector extension: one register with AVX-512 or
// AVX2, several on older CPUs). A vector_size that depends on a template parameter is silently
// ignored by GCC, hence one alias per machine block. Vectors are only ever locals here: passed
// to or returned from a function they would change the ABI between the per-ISA objects.
using BlockLanes8 = float __attribute__((vector_size(8 * sizeof(float))));
using BlockLanes16 = float __attribute__((vector_size(16 * sizeof(float))));

// Max or average pooling of `planes` blocked planes, one row of output windows a work item (a
// network's few channel blocks of one image still split over the threads). The taps are walked
// straight from each axis's window bounds, the lanes in vectors of 8 or 16 (the rest of another
// block lane by lane): building a list of tap offsets per window and a lane loop the compiler
// left scalar cost three times ONNX Runtime's time on ResNet-50's 3x3 max pool.
template <std::int64_t StaticBlock, BlockedPooling Kind>
void poolBlockedPlanes(ThreadPool& pool, const WindowGeometry& g, std::int64_t planes,
                       std::int64_t runtimeBlock, const float* in, float* out, bool includePad) {
    static_assert(Kind == BlockedPooling::Max || Kind == BlockedPooling::Average);
    constexpr bool kMax = Kind == BlockedPooling::Max;
    constexpr float kInit = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
    constexpr std::int64_t kVector = StaticBlock == 8 ? 8 : 16;
    using Lanes = std::conditional_t<kVector == 16, BlockLanes16, BlockLanes8>;
    static_assert(sizeof(Lanes) == kVector * sizeof(float));
    const std::int64_t block = StaticBlock ? StaticBlock : runtimeBlock;
    const std::int64_t vectorLanes = block / kVector * kVector;
    const std::vector<AxisWindow> wz = axisWindows(g, 0), wy = axisWindows(g, 1),
                                  wx = axisWindows(g, 2);
    const std::int64_t iy = g.input[1], ix = g.input[2];
    const std::int64_t dz = g.dilation[0] * iy * ix * block, dy = g.dilation[1] * ix * block,
                       dx = g.dilation[2] * block;
    const auto rows = static_cast<std::int64_t>(wz.size() * wy.size());
    const double rowCost = static_cast<double>(g.output[2] * g.kernelSize() * block);
    pool.parallelFor(planes * rows, rowCost, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t p = item / rows, row = item % rows;
            const AxisWindow& z = wz[static_cast<std::size_t>(row / std::ssize(wy))];
            const AxisWindow& y = wy[static_cast<std::size_t>(row % std::ssize(wy))];
            const float* plane = in + p * g.inputSize() * block;
            float* o = out + (p * rows + row) * g.output[2] * block;
            for (const AxisWindow& x : wx) {
                const std::int64_t count =
                    (z.last - z.first) * (y.last - y.first) * (x.last - x.first);
                const std::int64_t divisor = includePad ? z.padded * y.padded * x.padded : count;
                const float divide = static_cast<float>(divisor);
                // The window's first tap inside the input (there is one when count > 0).
                const float* first = count == 0 ? plane
                                                : plane +
                                                      ((z.start + z.first * g.dilation[0]) * iy +
                                                       y.start + y.first * g.dilation[1]) *
                                                          ix * block +
                                                      (x.start + x.first * g.dilation[2]) * block;
                // Every tap's lanes at v, in window order.
                auto forEachTap = [&](auto&& visit) {
                    const float* depth = first;
                    for (std::int64_t kz = z.first; kz < z.last; ++kz, depth += dz) {
                        const float* tapRow = depth;
                        for (std::int64_t ky = y.first; ky < y.last; ++ky, tapRow += dy) {
                            const float* v = tapRow;
                            for (std::int64_t kx = x.first; kx < x.last; ++kx, v += dx) visit(v);
                        }
                    }
                };
                for (std::int64_t lane0 = 0; lane0 < vectorLanes; lane0 += kVector) {
                    Lanes acc = Lanes{} + kInit;
                    forEachTap([&acc, lane0](const float* v) {
                        Lanes lanes;
                        std::memcpy(&lanes, v + lane0, sizeof lanes);
                        if constexpr (Kind == BlockedPooling::Max)
                            acc = lanes > acc ? lanes : acc;
                        else
                            acc += lanes;
                    });
                    if constexpr (!kMax) acc = divisor ? acc / divide : Lanes{};
                    std::memcpy(o + lane0, &acc, sizeof acc);
                }
                for (std::int64_t lane = vectorLanes; lane < block; ++lane) {
                    float acc = kInit;
                    forEachTap([&acc, lane](const float* v) {
                        if constexpr (Kind == BlockedPooling::Max)
                            acc = v[lane] > acc ? v[lane] : acc;
                        else
                            acc += v[lane];
                    });
                    o[lane] = kMax ? acc : divisor ? acc / divide : 0.0f;
                }
                o += block;
            }
        }
    });
}

// The mean of each lane over a plane's `pixels` positions (`block` lanes a position), in four
// interleaved partial sums: one running sum waited on its own add at every pixel (a 112 x 112
// plane is 12,544 dependent adds a lane), 3x ONNX Runtime's time on EfficientNet-B0's squeeze
// pools.
template <std::int64_t StaticBlock>
void averageBlockedPlane(const float* plane, std::int64_t pixels, std::int64_t runtimeBlock,
                         float* out) {
    const std::int64_t block = StaticBlock ? StaticBlock : runtimeBlock;
    constexpr int kSums = 4;
    float sums[kSums][64] = {};
    std::int64_t p = 0;
    for (; p + kSums <= pixels; p += kSums)
        for (int k = 0; k < kSums; ++k) {
            const float* v = plane + (p + k) * block;
            for (std::int64_t lane = 0; lane < block; ++lane) sums[k][lane] += v[lane];
        }
    for (; p < pixels; ++p)
        for (std::int64_t lane = 0; lane < block; ++lane) sums[0][lane] += plane[p * block + lane];
    for (std::int64_t lane = 0; lane < block; ++lane) {
        const float total = (sums[0][lane] + sums[1][lane]) + (sums[2][lane] + sums[3][lane]);
        out[lane] = pixels ? total / static_cast<float>(pixels) : 0.0f;
    }
}

template <BlockedPooling Kind>
class BlockedPoolKernel : public Kernel {
  public:
    explicit BlockedPoolKernel(const NodeInfo& node)
        : attrs_(node), countIncludePad_(node.getInt("count_include_pad", 0) != 0) {
        require(Kind == BlockedPooling::GlobalAverage || !attrs_.kernelShape.empty(),
                "blocked pooling requires kernel_shape");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::Float && x.rank() >= 4 && x.rank() <= 6, [&] {
            return std::string(
                       "blocked pooling takes a float [N, Cb, spatial..., b] tensor, got ") +
                   dataTypeName(x.dtype()) + " " + shapeToString(x.shape());
        });
        const std::int64_t block = x.shape().back();
        require(block >= 1 && block <= 64,
                [&] { return "channel block must be 1 to 64, got " + std::to_string(block); });
        const Shape spatial(x.shape().begin() + 2, x.shape().end() - 1);
        WindowGeometry g = makeWindowGeometry(
            attrs_, spatial, Kind == BlockedPooling::GlobalAverage ? spatial : attrs_.kernelShape);
        resolveForwardWindow(g, attrs_.autoPad, attrs_.ceilMode);
        // From the geometry's dims directly (a range-for over outputShape()'s temporary drew
        // gcc 12's false -Wfree-nonheap-object).
        Shape outShape{x.dim(0), x.dim(1)};
        outShape.insert(outShape.end(), g.output.end() - g.spatialRank, g.output.end());
        outShape.push_back(block);
        Tensor y(DataType::Float, outShape);
        const std::int64_t planes = x.dim(0) * x.dim(1);
        auto pool = [&]<std::int64_t B>() {
            if constexpr (Kind == BlockedPooling::GlobalAverage) {
                const std::int64_t pixels = g.inputSize();
                const float* in = x.data<float>();
                float* out = y.data<float>();
                ctx.pool().parallelFor(planes, static_cast<double>(pixels * block),
                                       [&](std::int64_t begin, std::int64_t end) {
                                           for (std::int64_t p = begin; p < end; ++p)
                                               averageBlockedPlane<B>(in + p * pixels * block,
                                                                      pixels, block,
                                                                      out + p * block);
                                       });
            } else {
                poolBlockedPlanes<B, Kind>(ctx.pool(), g, planes, block, x.data<float>(),
                                           y.data<float>(), countIncludePad_);
            }
        };
        withStaticBlock(block, pool);
        outputs[0] = Value(std::move(y));
    }

  private:
    WindowAttributes attrs_;
    bool countIncludePad_;
};

// A tensor of `shape` holding `t` at the origin (cropped where `shape` is smaller, zero where
// it is larger).
Tensor placeAtOrigin(const Tensor& t, const Shape& shape) {
    Tensor out = Tensor::zeros(t.dtype(), shape);
    const std::size_t rank = shape.size(), size = dataTypeSize(t.dtype());
    if (out.numel() == 0 || t.numel() == 0) return out;
    const auto inStrides = shapeStrides(t.shape()), outStrides = shapeStrides(shape);
    const std::int64_t rowLength = std::min(t.shape().back(), shape.back());
    std::vector<std::int64_t> index(rank - 1, 0);
    while (true) {
        std::int64_t from = 0, to = 0;
        bool inside = true;
        for (std::size_t d = 0; d + 1 < rank; ++d) {
            inside = inside && index[d] < t.shape()[d];
            from += index[d] * inStrides[d];
            to += index[d] * outStrides[d];
        }
        if (inside)
            std::memcpy(static_cast<char*>(out.raw()) + to * size,
                        static_cast<const char*>(t.raw()) + from * size, rowLength * size);
        std::size_t d = rank - 1;
        while (d > 0 && ++index[d - 1] == shape[d - 1]) index[--d] = 0;
        if (d == 0) break;
    }
    return out;
}

class MaxUnpoolKernel : public Kernel {
  public:
    explicit MaxUnpoolKernel(const NodeInfo& node) : attrs_(node) {
        require(!attrs_.kernelShape.empty(), "MaxUnpool requires kernel_shape");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& indices = inputTensor(inputs, 1);
        const Tensor* outputShape = optionalInputTensor(inputs, 2);
        requireImageInput(x, "MaxUnpool");
        require(indices.shape() == x.shape(), [&] {
            return "indices I " + shapeToString(indices.shape()) + " must have the shape of X " +
                   shapeToString(x.shape());
        });
        // Indices address the unpooled shape the attributes imply (as in the ONNX reference);
        // an explicit output_shape then crops or zero-extends that result at the far ends.
        WindowGeometry g = makeWindowGeometry(attrs_, spatialDims(x), attrs_.kernelShape);
        Shape inferred{x.dim(0), x.dim(1)};
        for (int s = kMaxWindowRank - g.spatialRank; s < kMaxWindowRank; ++s)
            inferred.push_back((g.input[s] - 1) * g.stride[s] + g.kernel[s] - g.padBegin[s] -
                               g.padEnd[s]);
        Tensor y = Tensor::zeros(x.dtype(), inferred);
        dispatchBySize(x.dtype(), [&]<class T>() {
            if constexpr (!std::is_same_v<T, std::string>) {
                const T* in = static_cast<const T*>(x.raw());
                T* out = static_cast<T*>(y.raw());
                for (std::int64_t i = 0; i < x.numel(); ++i) {
                    const std::int64_t target = indices.valueAsInt64(i);
                    require(target >= 0 && target < y.numel(), [&] {
                        return "index " + std::to_string(target) + " is outside the output of " +
                               std::to_string(y.numel()) + " elements";
                    });
                    out[target] = in[i];
                }
            } else {
                fail("MaxUnpool does not support strings");
            }
        });
        if (outputShape) {
            Shape shape = outputShape->toInt64Vector();
            require(
                shape.size() == x.shape().size() && shape[0] == x.dim(0) && shape[1] == x.dim(1),
                [&] {
                    return "output_shape " + shapeToString(shape) +
                           " must be [N, C, spatial...] of X " + shapeToString(x.shape());
                });
            if (shape != inferred) y = placeAtOrigin(y, shape);
        }
        outputs[0] = Value(y);
    }

  private:
    WindowAttributes attrs_;
};

class MaxRoiPoolKernel : public Kernel {
  public:
    explicit MaxRoiPoolKernel(const NodeInfo& node)
        : pooledShape_(node.getInts("pooled_shape")),
          spatialScale_(node.getFloat("spatial_scale", 1.0f)) {
        require(pooledShape_.size() == 2 && pooledShape_[0] > 0 && pooledShape_[1] > 0,
                "MaxRoiPool requires pooled_shape [height, width] with positive values");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& rois = inputTensor(inputs, 1);
        require(x.rank() == 4, "MaxRoiPool input must be 4-D (N, C, H, W)");
        require(rois.rank() == 2 && rois.dim(1) == 5, [&] {
            return "rois must have shape [num_rois, 5], got " + shapeToString(rois.shape());
        });
        const std::int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
        const std::int64_t PH = pooledShape_[0], PW = pooledShape_[1];
        outputs[0] = dispatchFloat(x.dtype(), [&]<class T>() {
            Tensor y(x.dtype(), {rois.dim(0), C, PH, PW});
            const T* in = x.data<T>();
            T* out = y.data<T>();
            for (std::int64_t r = 0; r < rois.dim(0); ++r) {
                for (int i = 0; i < 5; ++i) {
                    const double v = rois.valueAsDouble(r * 5 + i);
                    require(std::isfinite(v) && std::abs(v * spatialScale_) < 1e15,
                            "roi values must be finite");
                }
                const std::int64_t batch = static_cast<std::int64_t>(rois.valueAsDouble(r * 5));
                require(batch >= 0 && batch < x.dim(0), [&] {
                    return "roi batch index " + std::to_string(batch) + " is out of range";
                });
                auto coord = [&](int i) {
                    return static_cast<std::int64_t>(
                        std::round(rois.valueAsDouble(r * 5 + i) * spatialScale_));
                };
                const std::int64_t x1 = coord(1), y1 = coord(2), x2 = coord(3), y2 = coord(4);
                const double binH =
                    static_cast<double>(std::max<std::int64_t>(y2 - y1 + 1, 1)) / PH;
                const double binW =
                    static_cast<double>(std::max<std::int64_t>(x2 - x1 + 1, 1)) / PW;
                for (std::int64_t c = 0; c < C; ++c) {
                    const T* plane = in + (batch * C + c) * H * W;
                    for (std::int64_t ph = 0; ph < PH; ++ph)
                        for (std::int64_t pw = 0; pw < PW; ++pw) {
                            auto clampTo = [](std::int64_t v, std::int64_t hi) {
                                return std::clamp<std::int64_t>(v, 0, hi);
                            };
                            const std::int64_t hs =
                                clampTo(static_cast<std::int64_t>(std::floor(ph * binH)) + y1, H);
                            const std::int64_t he = clampTo(
                                static_cast<std::int64_t>(std::ceil((ph + 1) * binH)) + y1, H);
                            const std::int64_t ws =
                                clampTo(static_cast<std::int64_t>(std::floor(pw * binW)) + x1, W);
                            const std::int64_t we = clampTo(
                                static_cast<std::int64_t>(std::ceil((pw + 1) * binW)) + x1, W);
                            T best = T(0);
                            bool any = false;
                            for (std::int64_t h = hs; h < he; ++h)
                                for (std::int64_t w = ws; w < we; ++w)
                                    if (!any || plane[h * W + w] > best)
                                        best = plane[h * W + w], any = true;
                            *out++ = best;
                        }
                }
            }
            return y;
        });
    }

  private:
    std::vector<std::int64_t> pooledShape_;
    float spatialScale_;
};

}  // namespace

void registerPoolOps(KernelRegistry& registry) {
    registry.add<MaxPoolKernel>("MaxPool", 1);
    registry.add<AveragePoolKernel>("AveragePool", 1);
    registry.add<LpPoolKernel>("LpPool", 1);
    registry.add<GlobalPoolOf<GlobalPooling::Average>>("GlobalAveragePool", 1);
    registry.add<GlobalPoolOf<GlobalPooling::Max>>("GlobalMaxPool", 1);
    registry.add<GlobalPoolOf<GlobalPooling::Lp>>("GlobalLpPool", 1);
    registry.add<MaxUnpoolKernel>("MaxUnpool", 9);
    registry.add<MaxRoiPoolKernel>("MaxRoiPool", 1);
    registry.add<BlockedPoolKernel<BlockedPooling::Max>>("BlockedMaxPool", 1, kLatestOpset,
                                                         kOnnxlensDomain);
    registry.add<BlockedPoolKernel<BlockedPooling::Average>>("BlockedAveragePool", 1, kLatestOpset,
                                                             kOnnxlensDomain);
    registry.add<BlockedPoolKernel<BlockedPooling::GlobalAverage>>("BlockedGlobalAveragePool", 1,
                                                                   kLatestOpset, kOnnxlensDomain);
}

}  // namespace onnxlens::engine::ops
