// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis or block-wise; to
// and from (u)int8, (u)int16, and the float8 (opset 19), int4/uint4 (21) and float4e2m1 (23)
// types) and DynamicQuantizeLinear.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ElementwiseUnary.h"
#include "OpFamilies.h"
#include "Quantized8Simd.h"
#include "onnxlens/engine/LowPrecisionFloat.h"

namespace onnxlens::engine::ops {

namespace {

// Quantized integer q for real value v: round half to even, shift by the zero point, saturate.
template <class Q>
Q quantize(float v, float scale, float zeroPoint) {
    const float q = std::nearbyint(v / scale) + zeroPoint;
    return saturatingCast<Q>(static_cast<double>(q));
}

// How scale and zero point apply: one pair for the whole tensor, or one per index of `axis`
// (the tensor seen as [outer, channels, inner]).
struct QuantizationLayout {
    std::int64_t outer = 1, channels = 1, inner = 1;

    static QuantizationLayout of(const std::string& op, const Tensor& x, const Tensor& scale,
                                 const Tensor* zeroPoint, int opset, std::int64_t axisAttr) {
        QuantizationLayout l;
        if (zeroPoint)
            require(zeroPoint->shape() == scale.shape(), [&] {
                return op + ": zero point shape " + shapeToString(zeroPoint->shape()) +
                       " differs from scale shape " + shapeToString(scale.shape());
            });
        if (scale.rank() == 0 || (scale.rank() == 1 && scale.numel() == 1)) {
            require(scale.numel() == 1, [&] { return op + ": scale is empty"; });
            l.inner = x.numel();
            return l;
        }
        require(opset >= 13 && scale.rank() == 1, [&] {
            return op + ": scale must be a scalar" + (opset >= 13 ? " or 1-D" : "") +
                   ", got shape " + shapeToString(scale.shape());
        });
        const std::int64_t axis = normalizeAxis(axisAttr, x.rank());
        require(scale.numel() == x.dim(axis), [&] {
            return op + ": scale has " + std::to_string(scale.numel()) + " values but axis " +
                   std::to_string(axis) + " of the input has size " + std::to_string(x.dim(axis));
        });
        for (std::int64_t d = 0; d < axis; ++d) l.outer *= x.dim(d);
        l.channels = x.dim(axis);
        for (std::int64_t d = axis + 1; d < x.rank(); ++d) l.inner *= x.dim(d);
        return l;
    }

    // Calls fn(channel, begin, end) for each contiguous run sharing one channel, over the pool.
    template <class Fn>
    void forEachRun(KernelContext& ctx, double cost, Fn&& fn) const {
        ctx.pool().parallelFor(outer * channels, cost * static_cast<double>(inner),
                               [&](std::int64_t begin, std::int64_t end) {
                                   for (std::int64_t r = begin; r < end; ++r)
                                       fn(r % channels, r * inner, (r + 1) * inner);
                               });
    }
};

std::vector<float> floatValues(const Tensor& t) {
    std::vector<float> v(static_cast<std::size_t>(t.numel()));
    for (std::int64_t i = 0; i < t.numel(); ++i)
        v[static_cast<std::size_t>(i)] = static_cast<float>(t.valueAsDouble(i));
    return v;
}

void requireFloatScale(const std::string& op, const Tensor& scale) {
    require(isFloatingPoint(scale.dtype()), [&] {
        return op + ": scale must be floating point, got " + dataTypeName(scale.dtype());
    });
}

// Block-wise quantization (opset 21, block_size > 0): scale and zero point have the rank of x,
// with ceil(L / block_size) entries along `axis` (length L) and x's sizes elsewhere; element
// (.., l, ..) uses entry (.., l / block_size, ..). x is seen as [outer, L, inner].
struct BlockwiseLayout {
    std::int64_t outer = 1, length = 1, inner = 1, blocks = 1, blockSize = 1;

    static BlockwiseLayout of(const std::string& op, const Tensor& x, const Tensor& scale,
                              const Tensor* zeroPoint, std::int64_t axisAttr,
                              std::int64_t blockSize) {
        require(blockSize > 0, [&] { return op + ": block_size must be positive"; });
        if (zeroPoint)
            require(zeroPoint->shape() == scale.shape(), [&] {
                return op + ": zero point shape " + shapeToString(zeroPoint->shape()) +
                       " differs from scale shape " + shapeToString(scale.shape());
            });
        require(scale.rank() == x.rank() && x.rank() > 0, [&] {
            return op + ": block-wise scale must have the rank of the input, got " +
                   shapeToString(scale.shape()) + " for " + shapeToString(x.shape());
        });
        const std::int64_t axis = normalizeAxis(axisAttr, x.rank());
        BlockwiseLayout l;
        l.blockSize = blockSize;
        l.length = x.dim(axis);
        l.blocks = (l.length + blockSize - 1) / blockSize;
        for (std::int64_t d = 0; d < x.rank(); ++d) {
            const std::int64_t expected = d == axis ? l.blocks : x.dim(d);
            require(scale.dim(d) == expected, [&] {
                return op + ": block-wise scale " + shapeToString(scale.shape()) +
                       " does not fit " + shapeToString(x.shape()) + " with block_size " +
                       std::to_string(blockSize) + " on axis " + std::to_string(axis);
            });
            if (d < axis) l.outer *= x.dim(d);
            if (d > axis) l.inner *= x.dim(d);
        }
        return l;
    }

    // Calls fn(element, parameter) for every element index and its scale index.
    template <class Fn>
    void forEach(KernelContext& ctx, double cost, Fn&& fn) const {
        ctx.pool().parallelFor(outer * length, cost * static_cast<double>(inner),
                               [&](std::int64_t begin, std::int64_t end) {
                                   for (std::int64_t r = begin; r < end; ++r) {
                                       const std::int64_t o = r / length, l = r % length;
                                       const std::int64_t p = (o * blocks + l / blockSize) * inner;
                                       for (std::int64_t i = 0; i < inner; ++i)
                                           fn(r * inner + i, p + i);
                                   }
                               });
    }
};

Tensor quantizeBlockwise(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                         const Tensor* zeroPoint, std::int64_t axis, std::int64_t blockSize,
                         DataType outType) {
    const auto layout = BlockwiseLayout::of("QuantizeLinear", x, scale, zeroPoint, axis, blockSize);
    require(
        outType == DataType::UInt8 || outType == DataType::Int8 || outType == DataType::UInt16 ||
            outType == DataType::Int16,
        [&] {
            return std::string(
                       "QuantizeLinear: block-wise output type must be (u)int8 or (u)int16, got ") +
                   dataTypeName(outType);
        });
    const std::vector<float> scales = floatValues(scale);
    const std::vector<float> zeros =
        zeroPoint ? floatValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);
    for (float s : scales)
        require(s != 0.0f && std::isfinite(s), "QuantizeLinear: scale must be finite and non-zero");
    Tensor y(outType, x.shape());
    dispatchTypeSet<TypeSet::Float>(x.dtype(), "QuantizeLinear", [&]<class T>() {
        const T* in = x.data<T>();
        dispatchInteger(outType, [&]<class Q>() {
            Q* out = y.data<Q>();
            layout.forEach(ctx, 4.0, [&](std::int64_t i, std::int64_t p) {
                const auto k = static_cast<std::size_t>(p);
                out[i] = quantize<Q>(static_cast<float>(in[i]), scales[k], zeros[k]);
            });
        });
    });
    return y;
}

Tensor dequantizeBlockwise(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                           const Tensor* zeroPoint, std::int64_t axis, std::int64_t blockSize) {
    const auto layout =
        BlockwiseLayout::of("DequantizeLinear", x, scale, zeroPoint, axis, blockSize);
    if (zeroPoint)
        require(zeroPoint->dtype() == x.dtype(), [&] {
            return std::string("DequantizeLinear: zero point type ") +
                   dataTypeName(zeroPoint->dtype()) + " differs from input type " +
                   dataTypeName(x.dtype());
        });
    const std::vector<float> scales = floatValues(scale);
    const std::vector<float> zeros =
        zeroPoint ? floatValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);
    Tensor y(DataType::Float, x.shape());
    float* out = y.data<float>();
    dispatchTypeSet<TypeSet::Integer>(x.dtype(), "DequantizeLinear", [&]<class T>() {
        const T* in = x.data<T>();
        layout.forEach(ctx, 2.0, [&](std::int64_t i, std::int64_t p) {
            const auto k = static_cast<std::size_t>(p);
            out[i] = (static_cast<float>(in[i]) - zeros[k]) * scales[k];
        });
    });
    // The output has the scale's type (float, float16 or bfloat16).
    return scale.dtype() == DataType::Float ? y : y.castTo(scale.dtype());
}

// ---------------------------------------------------------------------------------------------
// The low-precision types: float8 (QuantizeLinear/DequantizeLinear 19), int4/uint4 (21) and
// float4e2m1 (23). Per tensor, per axis and block-wise alike: `paramIndex` maps an element to
// its scale and zero point.

// The values of a low-precision tensor (a zero point), decoded.
std::vector<float> lowPrecisionValues(const Tensor& t) {
    std::vector<float> v(static_cast<std::size_t>(t.numel()));
    const auto* codes = static_cast<const std::uint8_t*>(t.raw());
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(lowp::lowPrecisionToDouble(t.dtype(), codes[i]));
    return v;
}

void requireLowPrecisionQuantType(const std::string& op, DataType type, int opset) {
    const int since = type == DataType::Int4 || type == DataType::UInt4 ? 21
                      : type == DataType::Float4E2M1                    ? 23
                      : type == DataType::Float8E8M0                    ? 0
                                                                        : 19;
    require(since != 0 && opset >= since, [&] {
        return op + ": type " + dataTypeName(type) + " is not supported at opset " +
               std::to_string(opset);
    });
}

// Calls fn(element, parameter) over x, for the per-tensor/per-axis or the block-wise layout.
template <class Fn>
void forEachQuantized(KernelContext& ctx, const std::string& op, const Tensor& x,
                      const Tensor& scale, const Tensor* zeroPoint, int opset, std::int64_t axis,
                      std::int64_t blockSize, Fn&& fn) {
    if (blockSize > 0) {
        BlockwiseLayout::of(op, x, scale, zeroPoint, axis, blockSize).forEach(ctx, 4.0, fn);
        return;
    }
    QuantizationLayout::of(op, x, scale, zeroPoint, opset, axis)
        .forEachRun(ctx, 4.0, [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i) fn(i, c);
        });
}

// y = saturate(round(x / scale) + zero_point) for int4/uint4; y = cast(x / scale + zero_point)
// (round to nearest even, `saturate` as Cast) for the float types.
Tensor quantizeLowPrecision(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                            const Tensor* zeroPoint, DataType outType, bool saturate, int opset,
                            std::int64_t axis, std::int64_t blockSize) {
    requireLowPrecisionQuantType("QuantizeLinear", outType, opset);
    const std::vector<float> scales = floatValues(scale);
    const std::vector<float> zeros =
        zeroPoint ? lowPrecisionValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);
    for (float s : scales)
        require(s != 0.0f && std::isfinite(s), "QuantizeLinear: scale must be finite and non-zero");
    Tensor y(outType, x.shape());
    auto* out = static_cast<std::uint8_t*>(y.raw());
    const bool integer = outType == DataType::Int4 || outType == DataType::UInt4;
    dispatchTypeSet<TypeSet::Numeric>(x.dtype(), "QuantizeLinear", [&]<class T>() {
        const T* in = x.data<T>();
        forEachQuantized(ctx, "QuantizeLinear", x, scale, zeroPoint, opset, axis, blockSize,
                         [&](std::int64_t i, std::int64_t p) {
                             const auto k = static_cast<std::size_t>(p);
                             const float v = static_cast<float>(in[i]) / scales[k];
                             out[i] = integer ? lowp::fourBitIntegerFromDouble(
                                                    outType == DataType::Int4,
                                                    static_cast<double>(std::nearbyint(v)) +
                                                        static_cast<double>(zeros[k]))
                                              : lowp::lowPrecisionFromDouble(
                                                    outType, static_cast<double>(v + zeros[k]),
                                                    saturate);
                         });
    });
    return y;
}

// y = (x - zero_point) * scale, in the scale's type.
Tensor dequantizeLowPrecision(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                              const Tensor* zeroPoint, int opset, std::int64_t axis,
                              std::int64_t blockSize) {
    requireLowPrecisionQuantType("DequantizeLinear", x.dtype(), opset);
    if (zeroPoint)
        require(zeroPoint->dtype() == x.dtype(), [&] {
            return std::string("DequantizeLinear: zero point type ") +
                   dataTypeName(zeroPoint->dtype()) + " differs from input type " +
                   dataTypeName(x.dtype());
        });
    const std::vector<float> scales = floatValues(scale);
    const std::vector<float> zeros =
        zeroPoint ? lowPrecisionValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);
    std::array<float, 256> decoded{};
    for (int code = 0; code < 256; ++code)
        decoded[static_cast<std::size_t>(code)] = static_cast<float>(
            lowp::lowPrecisionToDouble(x.dtype(), static_cast<std::uint8_t>(code)));
    Tensor y(DataType::Float, x.shape());
    float* out = y.data<float>();
    const auto* in = static_cast<const std::uint8_t*>(x.raw());
    forEachQuantized(ctx, "DequantizeLinear", x, scale, zeroPoint, opset, axis, blockSize,
                     [&](std::int64_t i, std::int64_t p) {
                         const auto k = static_cast<std::size_t>(p);
                         out[i] = (decoded[in[i]] - zeros[k]) * scales[k];
                     });
    return scale.dtype() == DataType::Float ? y : y.castTo(scale.dtype());
}

class QuantizeLinearKernel final : public Kernel {
  public:
    explicit QuantizeLinearKernel(const NodeInfo& node)
        : opset_(node.opsetVersion()),
          axis_(node.getInt("axis", 1)),
          blockSize_(opset_ >= 21 ? node.getInt("block_size", 0) : 0),
          saturate_(opset_ < 19 || node.getInt("saturate", 1) != 0) {
        // Opset 21: without a zero point, output_dtype names the output type (uint8 by default).
        const std::int64_t outputType = opset_ >= 21 ? node.getInt("output_dtype", 0) : 0;
        if (outputType != 0) defaultOutType_ = dataTypeFromOnnx(static_cast<int>(outputType));
        require(blockSize_ >= 0, "QuantizeLinear: block_size must not be negative");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& scale = inputTensor(inputs, 1);
        const Tensor* zeroPoint = optionalInputTensor(inputs, 2);
        requireFloatScale("QuantizeLinear", scale);
        const DataType outType = zeroPoint ? zeroPoint->dtype() : defaultOutType_;
        if (isLowPrecision(outType)) {
            outputs[0] = Value(quantizeLowPrecision(ctx, x, scale, zeroPoint, outType, saturate_,
                                                    opset_, axis_, blockSize_));
            return;
        }
        if (blockSize_ > 0) {
            outputs[0] =
                Value(quantizeBlockwise(ctx, x, scale, zeroPoint, axis_, blockSize_, outType));
            return;
        }
        require(outType == DataType::UInt8 || outType == DataType::Int8, [&] {
            return std::string("QuantizeLinear: zero point must be uint8 or int8, got ") +
                   dataTypeName(outType);
        });
        const auto layout =
            QuantizationLayout::of("QuantizeLinear", x, scale, zeroPoint, opset_, axis_);
        const std::vector<float> scales = floatValues(scale);
        const std::vector<float> zeros =
            zeroPoint ? floatValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);
        for (float s : scales)
            require(s != 0.0f && std::isfinite(s),
                    "QuantizeLinear: scale must be finite and non-zero");

        Tensor y(outType, x.shape());
        dispatchTypeSet<TypeSet::Numeric>(x.dtype(), "QuantizeLinear", [&]<class T>() {
            const T* in = x.data<T>();
            const auto fill = [&]<class Q>() {
                Q* out = y.data<Q>();
                layout.forEachRun(ctx, 4.0,
                                  [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
                                      const float s = scales[static_cast<std::size_t>(c)];
                                      const float z = zeros[static_cast<std::size_t>(c)];
                                      // Local pointers: a byte store may alias the captured
                                      // ones, which keeps the loop from being vectorised.
                                      const T* __restrict__ src = in;
                                      Q* __restrict__ dst = out;
                                      std::int64_t i = begin;
                                      if constexpr (std::is_same_v<T, float>)
                                          i = quantizeFloatsVector<Q>(src, begin, end, s, z, dst);
                                      for (; i < end; ++i)
                                          dst[i] = quantize<Q>(static_cast<float>(src[i]), s, z);
                                  });
            };
            if (outType == DataType::UInt8)
                fill.template operator()<std::uint8_t>();
            else
                fill.template operator()<std::int8_t>();
        });
        outputs[0] = Value(y);
    }

  private:
    int opset_;
    std::int64_t axis_;
    std::int64_t blockSize_;
    bool saturate_;  // float8 outputs (opset 19)
    DataType defaultOutType_ = DataType::UInt8;
};

class DequantizeLinearKernel final : public Kernel {
  public:
    explicit DequantizeLinearKernel(const NodeInfo& node)
        : opset_(node.opsetVersion()),
          axis_(node.getInt("axis", 1)),
          blockSize_(opset_ >= 21 ? node.getInt("block_size", 0) : 0) {
        require(blockSize_ >= 0, "DequantizeLinear: block_size must not be negative");
        // Opset 23: output_dtype, when given, must be the scale's type; the output takes it.
        const std::int64_t outputType = opset_ >= 23 ? node.getInt("output_dtype", 0) : 0;
        if (outputType != 0) outputType_ = dataTypeFromOnnx(static_cast<int>(outputType));
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& scale = inputTensor(inputs, 1);
        const Tensor* zeroPoint = optionalInputTensor(inputs, 2);
        requireFloatScale("DequantizeLinear", scale);
        if (outputType_)
            require(*outputType_ == scale.dtype(), [&] {
                return std::string("DequantizeLinear: output_dtype ") + dataTypeName(*outputType_) +
                       " differs from the scale's type " + dataTypeName(scale.dtype());
            });
        if (isLowPrecision(x.dtype())) {
            outputs[0] =
                Value(dequantizeLowPrecision(ctx, x, scale, zeroPoint, opset_, axis_, blockSize_));
            return;
        }
        if (blockSize_ > 0) {
            outputs[0] = Value(dequantizeBlockwise(ctx, x, scale, zeroPoint, axis_, blockSize_));
            return;
        }
        if (zeroPoint)
            require(zeroPoint->dtype() == x.dtype(), [&] {
                return std::string("DequantizeLinear: zero point type ") +
                       dataTypeName(zeroPoint->dtype()) + " differs from input type " +
                       dataTypeName(x.dtype());
            });
        const auto layout =
            QuantizationLayout::of("DequantizeLinear", x, scale, zeroPoint, opset_, axis_);
        const std::vector<float> scales = floatValues(scale);
        const std::vector<float> zeros =
            zeroPoint ? floatValues(*zeroPoint) : std::vector<float>(scales.size(), 0.0f);

        Tensor y(DataType::Float, x.shape());
        float* out = y.data<float>();
        dispatchTypeSet<TypeSet::Numeric>(x.dtype(), "DequantizeLinear", [&]<class T>() {
            const T* in = x.data<T>();
            layout.forEachRun(ctx, 2.0, [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
                const float s = scales[static_cast<std::size_t>(c)];
                const float z = zeros[static_cast<std::size_t>(c)];
                for (std::int64_t i = begin; i < end; ++i)
                    out[i] = (static_cast<float>(in[i]) - z) * s;
            });
        });
        outputs[0] = Value(y);
    }

  private:
    int opset_;
    std::int64_t axis_;
    std::int64_t blockSize_;
    std::optional<DataType> outputType_;
};

// The range DynamicQuantizeLinear maps onto [0, 255]: [min(x, 0), max(x, 0)], NaN ignored. The
// comparisons are written so that the compiler vectorises them (a NaN compares false and leaves
// the running bound as it is).
std::pair<float, float> rangeWithZero(KernelContext& ctx, const float* in, std::int64_t count) {
    const std::int64_t chunks =
        std::max<std::int64_t>(1, std::min<std::int64_t>(ctx.pool().threads(), count / 65536));
    std::vector<float> lows(static_cast<std::size_t>(chunks), 0.0f),
        highs(static_cast<std::size_t>(chunks), 0.0f);
    const std::int64_t per = (count + chunks - 1) / chunks;
    ctx.pool().parallelFor(chunks, static_cast<double>(per), [&](std::int64_t c0, std::int64_t c1) {
        for (std::int64_t c = c0; c < c1; ++c) {
            float low = 0.0f, high = 0.0f;
            const std::int64_t end = std::min(count, (c + 1) * per);
            std::int64_t i = c * per;
#ifdef __AVX2__
            // Four vectors of minima and maxima (the scalar loop's comparisons: minps(x, m) keeps
            // m when x is NaN, as `x < m ? x : m` does); the compiler would not reorder a float
            // reduction itself.
            if (end - i >= 32) {
                __m256 lo[4], hi[4];
                for (int k = 0; k < 4; ++k) lo[k] = hi[k] = _mm256_setzero_ps();
                for (; i + 32 <= end; i += 32)
                    for (int k = 0; k < 4; ++k) {
                        const __m256 v = _mm256_loadu_ps(in + i + 8 * k);
                        lo[k] = _mm256_min_ps(v, lo[k]);
                        hi[k] = _mm256_max_ps(v, hi[k]);
                    }
                alignas(32) float lanes[2][8];
                _mm256_store_ps(lanes[0], _mm256_min_ps(_mm256_min_ps(lo[0], lo[1]),
                                                        _mm256_min_ps(lo[2], lo[3])));
                _mm256_store_ps(lanes[1], _mm256_max_ps(_mm256_max_ps(hi[0], hi[1]),
                                                        _mm256_max_ps(hi[2], hi[3])));
                for (int k = 0; k < 8; ++k) {
                    low = lanes[0][k] < low ? lanes[0][k] : low;
                    high = lanes[1][k] > high ? lanes[1][k] : high;
                }
            }
#endif
            for (; i < end; ++i) {
                low = in[i] < low ? in[i] : low;
                high = in[i] > high ? in[i] : high;
            }
            lows[static_cast<std::size_t>(c)] = low;
            highs[static_cast<std::size_t>(c)] = high;
        }
    });
    return {*std::min_element(lows.begin(), lows.end()),
            *std::max_element(highs.begin(), highs.end())};
}

// Quantizes a float tensor to uint8 with the scale and zero point that map [min(x, 0), max(x, 0)]
// onto [0, 255].
class DynamicQuantizeLinearKernel final : public Kernel {
  public:
    explicit DynamicQuantizeLinearKernel(const NodeInfo&) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::Float, [&] {
            return std::string("DynamicQuantizeLinear: input must be float, got ") +
                   dataTypeName(x.dtype());
        });
        const float* in = x.data<float>();
        const auto [low, high] = rangeWithZero(ctx, in, x.numel());
        const float scale = (high - low) / 255.0f;
        // An all-zero input gives scale 0: every value is then the zero point 0.
        const float zeroPoint =
            scale == 0.0f ? 0.0f : saturatingCast<std::uint8_t>(std::nearbyint(-low / scale));

        Tensor y(DataType::UInt8, x.shape());
        std::uint8_t* out = y.data<std::uint8_t>();
        if (scale == 0.0f) {
            std::fill(out, out + x.numel(), std::uint8_t{0});
        } else {
            ctx.pool().parallelFor(x.numel(), 2.0, [&](std::int64_t begin, std::int64_t end) {
                quantizeToUInt8(in, begin, end, scale, zeroPoint, out);
            });
        }
        outputs[0] = Value(y);
        if (outputs.size() > 1) outputs[1] = Value(Tensor::scalar<float>(scale));
        if (outputs.size() > 2)
            outputs[2] = Value(Tensor::scalar<std::uint8_t>(static_cast<std::uint8_t>(zeroPoint)));
    }
};

}  // namespace

void registerQuantizeOps(KernelRegistry& registry) {
    registry.add<QuantizeLinearKernel>("QuantizeLinear");
    registry.add<DequantizeLinearKernel>("DequantizeLinear");
    registry.add<DynamicQuantizeLinearKernel>("DynamicQuantizeLinear");
}

}  // namespace onnxlens::engine::ops
