// ONNX Runtime's com.microsoft quantized pools on 8-bit data (uint8 or int8, per-tensor scales):
// QLinearAveragePool and QLinearGlobalAveragePool, channels first ([N, C, spatial...]) or, with
// channels_last = 1, last ([N, spatial..., C]). The window geometry is the engine's
// (ConvGeometry.h, PoolWindows.h); the arithmetic is ONNX Runtime's CPU kernels'
// (MsQLinearCommon.h), so that quantized models agree with ONNX Runtime step for step.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ConvGeometry.h"
#include "MsQLinearCommon.h"
#include "OpFamilies.h"
#include "PoolWindows.h"

namespace onnxlens::engine::ops {

namespace {

using namespace qlinear;

// The quantized input's layout: batch, channels and the spatial dims, channels first or last.
struct PoolLayout {
    std::int64_t batch = 0, channels = 0;
    Shape spatial;
    bool channelsLast = false;

    static PoolLayout of(const Tensor& x, bool channelsLast) {
        require(x.rank() >= 3, [&] {
            return inputLabel(0, "X") + " must have rank 3 or more (" +
                   (channelsLast ? "N, spatial..., C" : "N, C, spatial...") + "), got shape " +
                   shapeToString(x.shape());
        });
        PoolLayout l;
        l.channelsLast = channelsLast;
        l.batch = x.dim(0);
        l.channels = channelsLast ? x.dim(x.rank() - 1) : x.dim(1);
        const auto first = x.shape().begin() + (channelsLast ? 1 : 2);
        l.spatial.assign(first, first + (x.rank() - 2));
        return l;
    }

    std::int64_t imageSize() const { return shapeElementCount(spatial); }

    Shape outputShape(const Shape& outSpatial) const {
        Shape out{batch};
        if (!channelsLast) out.push_back(channels);
        out.insert(out.end(), outSpatial.begin(), outSpatial.end());
        if (channelsLast) out.push_back(channels);
        return out;
    }
};

// The global average of each (n, c) image as MLAS computes it (integers, then one float scale):
// y = saturate(round_half_even(float(sum(x) - x_zero * size) * (x_scale / (y_scale * size))) +
// y_zero). An empty image gives y_zero (a real 0).
template <class Q>
void globalAveragePool(KernelContext& ctx, const Q* in, Q* out, const PoolLayout& l, float xScale,
                       std::int32_t xZero, float yScale, std::int32_t yZero) {
    const std::int64_t size = l.imageSize(), C = l.channels;
    const float sizeFloat = static_cast<float>(size);
    const float denominator = yScale * sizeFloat;
    const float scale = xScale / denominator;
    const std::int64_t bias = -static_cast<std::int64_t>(xZero) * size;
    const auto finish = [&](std::int64_t sum) {
        if (size == 0) return saturateTo<Q>(yZero);
        const float scaled = static_cast<float>(sum + bias) * scale;
        return saturateTo<Q>(std::int64_t{roundToInt32(scaled)} + yZero);
    };
    if (!l.channelsLast) {
        ctx.pool().parallelFor(l.batch * C, static_cast<double>(size),
                               [&](std::int64_t begin, std::int64_t end) {
                                   for (std::int64_t p = begin; p < end; ++p) {
                                       const Q* image = in + p * size;
                                       std::int64_t sum = 0;
                                       for (std::int64_t i = 0; i < size; ++i) sum += image[i];
                                       out[p] = finish(sum);
                                   }
                               });
        return;
    }
    // Per image, the rows of C channels added into C sums: int32 sums (eight channels per vector
    // add) while size * 255 fits in them, else int64.
    const auto sumRows = [&]<class Sum>() {
        ctx.pool().parallelFor(l.batch, static_cast<double>(size * C),
                               [&](std::int64_t begin, std::int64_t end) {
                                   std::vector<Sum> sums(static_cast<std::size_t>(C));
                                   for (std::int64_t n = begin; n < end; ++n) {
                                       std::fill(sums.begin(), sums.end(), Sum{0});
                                       Sum* __restrict__ s = sums.data();
                                       for (std::int64_t i = 0; i < size; ++i) {
                                           const Q* __restrict__ row = in + (n * size + i) * C;
                                           for (std::int64_t c = 0; c < C; ++c) s[c] += row[c];
                                       }
                                       for (std::int64_t c = 0; c < C; ++c)
                                           out[n * C + c] = finish(std::int64_t{s[c]});
                                   }
                               });
    };
    if (size <= std::numeric_limits<std::int32_t>::max() / 255)
        sumRows.template operator()<std::int32_t>();
    else
        sumRows.template operator()<std::int64_t>();
}

struct PoolParameters {
    float xScale, yScale;
    std::int32_t xZero, yZero;

    static PoolParameters of(const std::vector<const Value*>& inputs, DataType type) {
        PoolParameters p{};
        p.xScale = scaleInput(inputs, 1, "x_scale");
        p.xZero = zeroPointInput(inputs, 2, "x_zero_point", type, false);
        p.yScale = scaleInput(inputs, 3, "y_scale");
        p.yZero = zeroPointInput(inputs, 4, "y_zero_point", type, false);
        return p;
    }
};

// QLinearGlobalAveragePool (channels_last): X, x_scale, x_zero_point, y_scale, y_zero_point.
class QLinearGlobalAveragePoolKernel final : public Kernel {
  public:
    explicit QLinearGlobalAveragePoolKernel(const NodeInfo& node)
        : channelsLast_(node.getInt("channels_last", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = quantizedInput(inputs, 0, "X");
        const PoolParameters p = PoolParameters::of(inputs, x.dtype());
        const PoolLayout layout = PoolLayout::of(x, channelsLast_);
        Tensor y(x.dtype(), layout.outputShape(Shape(layout.spatial.size(), 1)));
        dispatchQuantized8(x.dtype(), [&]<class Q>() {
            globalAveragePool(ctx, x.data<Q>(), y.data<Q>(), layout, p.xScale, p.xZero, p.yScale,
                              p.yZero);
        });
        outputs[0] = Value(y);
    }

  private:
    bool channelsLast_;
};

// Window attributes beyond this are refused: no real pool comes near, and it keeps every size
// product of the geometry far from overflow.
constexpr std::int64_t kMaxWindowAttribute = std::int64_t{1} << 31;
constexpr std::int64_t kMaxKernelTaps = std::int64_t{1} << 24;

// QLinearAveragePool (auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides,
// channels_last): X, x_scale, x_zero_point?, y_scale, y_zero_point?. As ONNX Runtime computes
// it: each window's values are dequantized in float (x_scale * (x - x_zero)) and summed in
// window order, divided by the number of taps inside the input (count_include_pad = 0) or by the
// whole kernel size (count_include_pad = 1, even where a ceil_mode window passes the end
// padding), and quantized as round_half_even(avg / y_scale + y_zero). A kernel covering the whole
// image with no padding is the global average (the integer arithmetic above), as in ONNX Runtime.
class QLinearAveragePoolKernel final : public Kernel {
  public:
    explicit QLinearAveragePoolKernel(const NodeInfo& node)
        : attrs_(node),
          countIncludePad_(node.getInt("count_include_pad", 0) != 0),
          channelsLast_(node.getInt("channels_last", 0) != 0) {
        require(!attrs_.kernelShape.empty(), "QLinearAveragePool requires kernel_shape");
        for (auto d : attrs_.dilations)
            require(d == 1, [&] {
                return "QLinearAveragePool has no dilations (got a dilation of " +
                       std::to_string(d) + ")";
            });
        for (const auto* values : {&attrs_.kernelShape, &attrs_.strides, &attrs_.pads})
            for (auto v : *values)
                require(v < kMaxWindowAttribute, [&] {
                    return "QLinearAveragePool: kernel_shape, strides and pads must be below 2^31, "
                           "got " +
                           std::to_string(v);
                });
        std::int64_t taps = 1;
        for (auto k : attrs_.kernelShape) {
            taps *= k;  // each factor < 2^31 and the running product <= 2^24: no overflow
            require(taps <= kMaxKernelTaps, [&] {
                return "QLinearAveragePool: kernel_shape " + shapeToString(attrs_.kernelShape) +
                       " has more than 2^24 taps";
            });
        }
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = quantizedInput(inputs, 0, "X");
        const PoolParameters p = PoolParameters::of(inputs, x.dtype());
        const PoolLayout layout = PoolLayout::of(x, channelsLast_);
        WindowGeometry g = makeWindowGeometry(attrs_, layout.spatial, attrs_.kernelShape);
        resolveForwardWindow(g, attrs_.autoPad, attrs_.ceilMode);
        Tensor y(x.dtype(), layout.outputShape(g.outputShape()));
        if (y.numel() == 0) {
            outputs[0] = Value(y);
            return;
        }

        bool global = true;
        for (int s = 0; s < kMaxWindowRank; ++s)
            global = global && g.kernel[s] == g.input[s] && g.padBegin[s] == 0 && g.padEnd[s] == 0;
        dispatchQuantized8(x.dtype(), [&]<class Q>() {
            if (global)
                globalAveragePool(ctx, x.data<Q>(), y.data<Q>(), layout, p.xScale, p.xZero,
                                  p.yScale, p.yZero);
            else
                windowAveragePool(ctx, x.data<Q>(), y.data<Q>(), layout, g, p);
        });
        outputs[0] = Value(y);
    }

  private:
    template <class Q>
    void windowAveragePool(KernelContext& ctx, const Q* in, Q* out, const PoolLayout& l,
                           const WindowGeometry& g, const PoolParameters& p) const {
        std::array<float, 256> real{};  // the dequantized value of each code, by its byte
        for (int code = 0; code < 256; ++code) {
            const Q q = static_cast<Q>(static_cast<std::uint8_t>(code));
            real[static_cast<std::uint8_t>(q)] = dequantizeValue(q, p.xScale, p.xZero);
        }
        const auto byteOf = [](Q q) { return static_cast<std::uint8_t>(q); };
        const std::int64_t kernelSize = g.kernelSize();
        const auto finish = [&](float sum, std::int64_t taps) {
            const float divisor = static_cast<float>(countIncludePad_ ? kernelSize : taps);
            const float average = sum / divisor;
            const float scaled = average / p.yScale;
            return saturateTo<Q>(roundToInt32(scaled + static_cast<float>(p.yZero)));
        };
        const std::int64_t inSize = g.inputSize(), outSize = g.outputSize(), C = l.channels;
        const double cost = static_cast<double>(outSize * std::min(kernelSize, inSize));
        if (!l.channelsLast) {
            ctx.pool().parallelFor(l.batch * C, cost, [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t plane = begin; plane < end; ++plane) {
                    const Q* image = in + plane * inSize;
                    Q* result = out + plane * outSize;
                    forEachWindow(g, [&](std::int64_t o, const std::int64_t* taps,
                                         std::int64_t count, std::int64_t) {
                        float sum = 0.0f;
                        for (std::int64_t t = 0; t < count; ++t)
                            sum += real[byteOf(image[taps[t]])];
                        result[o] =
                            count || countIncludePad_ ? finish(sum, count) : finish(0.0f, 1);
                    });
                }
            });
            return;
        }
        ctx.pool().parallelFor(
            l.batch, cost * static_cast<double>(C), [&](std::int64_t begin, std::int64_t end) {
                std::vector<float> sums(static_cast<std::size_t>(C));
                for (std::int64_t n = begin; n < end; ++n) {
                    const Q* image = in + n * inSize * C;
                    Q* result = out + n * outSize * C;
                    forEachWindow(g, [&](std::int64_t o, const std::int64_t* taps,
                                         std::int64_t count, std::int64_t) {
                        std::fill(sums.begin(), sums.end(), 0.0f);
                        for (std::int64_t t = 0; t < count; ++t) {
                            const Q* at = image + taps[t] * C;
                            for (std::int64_t c = 0; c < C; ++c)
                                sums[static_cast<std::size_t>(c)] += real[byteOf(at[c])];
                        }
                        for (std::int64_t c = 0; c < C; ++c)
                            result[o * C + c] =
                                count || countIncludePad_
                                    ? finish(sums[static_cast<std::size_t>(c)], count)
                                    : finish(0.0f, 1);
                    });
                }
            });
    }

    WindowAttributes attrs_;
    bool countIncludePad_;
    bool channelsLast_;
};

}  // namespace

void registerMsQLinearPoolOps(KernelRegistry& registry) {
    registry.add<QLinearAveragePoolKernel>("QLinearAveragePool", 1, kLatestOpset, kMsDomain);
    registry.add<QLinearGlobalAveragePoolKernel>("QLinearGlobalAveragePool", 1, kLatestOpset,
                                                 kMsDomain);
}

}  // namespace onnxlens::engine::ops
