// com.microsoft quantized products and lookups beside MatMulNBits (MsMatMulNBitsOps.cpp):
// - GatherBlockQuantized: Gather on a block-quantized table (int4, uint4, or uint8 holding 2, 4
//   or 8-bit values packed along the last axis, low bits first), dequantized on the way out:
//   (q - zero_point) * scale, the output of the scales' type. Zero point default 0 for int4 and
//   uint4, 2^(bits - 1) for uint8; an index outside [-s, s) is an error (as ONNX Runtime 1.30;
//   later versions' documentation gives a slice of zeros).
// - DynamicQuantizeMatMul: A float quantized to uint8 per tensor (range widened to hold 0, scale
//   (max - min) / 255, zero point rounded half to even), then the exact integer product with the
//   8-bit B, times a_scale * b_scale (per tensor or per column), plus bias.
// - QGemm: (A - a_zp) x (B - b_zp) + C in int32 (transA, transB), times alpha * a_scale *
//   b_scale; requantized to y_zero_point's type with y_scale when y_zero_point is given, else
//   float (divided by y_scale when that alone is given).
// The integer products run on oneDNN's int8 kernels where B is int8 (DnnlInt8MatMul, with B's
// zero points taken off exactly afterwards), else on an int32 GEMM.
// (com.microsoft MatMulIntegerToFloat is the com.onnxlens kernel of MatMulOps.cpp, registered
// there for both domains.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "DnnlInt8MatMul.h"
#include "OpFamilies.h"
#include "QuantizedProduct.h"

namespace onnxlens::engine::ops {
namespace {

constexpr const char* kMicrosoftDomain = "com.microsoft";

bool isEightBit(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

bool isScalarLike(const Tensor& t) { return t.rank() == 0 || (t.rank() == 1 && t.dim(0) == 1); }

// The values of a scalar or [n] tensor of floats / 8-bit integers (`what` names it in errors).
std::vector<float> scaleValues(const Tensor& t, std::int64_t n, const std::string& what) {
    require(t.dtype() == DataType::Float,
            [&] { return what + " must be float, got " + dataTypeName(t.dtype()); });
    require(isScalarLike(t) || (t.rank() == 1 && t.dim(0) == n), [&] {
        return what + " must be a scalar or [" + std::to_string(n) + "], got " +
               shapeToString(t.shape());
    });
    return {t.data<float>(), t.data<float>() + t.numel()};
}

std::vector<std::int32_t> zeroPointValues(const Tensor* t, DataType type, std::int64_t n,
                                          const std::string& what) {
    if (!t) return {0};
    require(t->dtype() == type, [&] {
        return what + " must be " + dataTypeName(type) + ", got " + dataTypeName(t->dtype());
    });
    require(isScalarLike(*t) || (t->rank() == 1 && t->dim(0) == n), [&] {
        return what + " must be a scalar or [" + std::to_string(n) + "], got " +
               shapeToString(t->shape());
    });
    std::vector<std::int32_t> v(static_cast<std::size_t>(t->numel()));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<std::int32_t>(t->valueAsInt64(static_cast<std::int64_t>(i)));
    return v;
}

// ---- GatherBlockQuantized ----------------------------------------------------------------------

class GatherBlockQuantizedKernel : public Kernel {
  public:
    explicit GatherBlockQuantizedKernel(const NodeInfo& node)
        : gatherAxis_(node.getInt("gather_axis", 0)),
          quantizeAxis_(node.getInt("quantize_axis", 1)),
          blockSize_(node.getInt("block_size", 128)),
          bits_(node.getInt("bits", 4)) {
        require(blockSize_ >= 16 && blockSize_ <= (std::int64_t{1} << 40) &&
                    (blockSize_ & (blockSize_ - 1)) == 0,
                [&] {
                    return "GatherBlockQuantized: attribute block_size must be a power of 2, at "
                           "least 16, "
                           "got " +
                           std::to_string(blockSize_);
                });
        require(bits_ == 2 || bits_ == 4 || bits_ == 8, [&] {
            return "GatherBlockQuantized: attribute bits must be 2, 4 or 8, got " +
                   std::to_string(bits_);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indices = inputTensor(inputs, 1);
        const Tensor& scales = inputTensor(inputs, 2);
        const Tensor* zeroPoints = optionalInputTensor(inputs, 3);
        const DataType type = data.dtype();
        const bool packed = type == DataType::UInt8;
        require(packed || type == DataType::Int4 || type == DataType::UInt4, [&] {
            return std::string(
                       "GatherBlockQuantized: input data must be int4, uint4 or uint8, got ") +
                   dataTypeName(type);
        });
        require(packed || bits_ == 4, [&] {
            return "GatherBlockQuantized: attribute bits must be 4 for int4/uint4 data, got " +
                   std::to_string(bits_);
        });
        require(data.rank() >= 1, "GatherBlockQuantized: input data must have rank >= 1");
        require(indices.dtype() == DataType::Int32 || indices.dtype() == DataType::Int64, [&] {
            return std::string("GatherBlockQuantized: input indices must be int32 or int64, got ") +
                   dataTypeName(indices.dtype());
        });
        require(isFloatingPoint(scales.dtype()) && scales.dtype() != DataType::Double, [&] {
            return std::string(
                       "GatherBlockQuantized: input scales must be float, float16 or "
                       "bfloat16, got ") +
                   dataTypeName(scales.dtype());
        });
        const std::int64_t rank = data.rank();
        const std::int64_t gatherAxis = axisOf(gatherAxis_, rank, "gather_axis");
        const std::int64_t quantizeAxis = axisOf(quantizeAxis_, rank, "quantize_axis");
        const std::int64_t components = packed ? 8 / bits_ : 1;
        if (packed) {
            require(gatherAxis == 0,
                    "GatherBlockQuantized: attribute gather_axis must be 0 for uint8 data");
            require(quantizeAxis == rank - 1 && quantizeAxis != gatherAxis,
                    "GatherBlockQuantized: attribute quantize_axis must be the last axis (and not "
                    "gather_axis) for uint8 data");
        }
        // Scales: data's shape, with ceil(values / block_size) along quantize_axis.
        require(scales.rank() == rank, [&] {
            return "GatherBlockQuantized: input scales " + shapeToString(scales.shape()) +
                   " must have the rank of data " + shapeToString(data.shape());
        });
        const std::int64_t quantizeDim = data.dim(quantizeAxis) * components;
        const std::int64_t scaleBlocks = (quantizeDim + blockSize_ - 1) / blockSize_;
        for (std::int64_t d = 0; d < rank; ++d)
            require(scales.dim(d) == (d == quantizeAxis ? scaleBlocks : data.dim(d)), [&] {
                return "GatherBlockQuantized: input scales " + shapeToString(scales.shape()) +
                       " do not fit data " + shapeToString(data.shape()) + " with block_size " +
                       std::to_string(blockSize_) + " on quantize_axis " +
                       std::to_string(quantizeAxis);
            });
        if (zeroPoints) {
            require(zeroPoints->dtype() == type,
                    "GatherBlockQuantized: input zero_points must have data's type");
            require(zeroPoints->rank() == rank,
                    "GatherBlockQuantized: input zero_points must have the rank of scales");
            for (std::int64_t d = 0; d < rank; ++d) {
                const std::int64_t expected = d == quantizeAxis && components > 1
                                                  ? (scaleBlocks + components - 1) / components
                                                  : scales.dim(d);
                require(zeroPoints->dim(d) == expected, [&] {
                    return "GatherBlockQuantized: input zero_points " +
                           shapeToString(zeroPoints->shape()) + " do not fit scales " +
                           shapeToString(scales.shape());
                });
            }
        }

        Shape outShape(data.shape().begin(), data.shape().begin() + gatherAxis);
        outShape.insert(outShape.end(), indices.shape().begin(), indices.shape().end());
        outShape.insert(outShape.end(), data.shape().begin() + gatherAxis + 1, data.shape().end());
        if (components > 1) outShape.back() *= components;
        Tensor y(DataType::Float, outShape);

        std::int64_t gatherM = 1, slice = components;
        for (std::int64_t d = 0; d < gatherAxis; ++d) gatherM *= data.dim(d);
        for (std::int64_t d = gatherAxis + 1; d < rank; ++d) slice *= data.dim(d);
        std::int64_t quantizeN = 1;
        for (std::int64_t d = quantizeAxis + 1; d < rank; ++d) quantizeN *= data.dim(d);
        const std::int64_t axisDim = data.dim(gatherAxis);
        const std::int64_t gatherN = indices.numel();
        const std::int64_t quantizeBlock = quantizeDim * quantizeN;
        const std::int64_t scaleBlock = scaleBlocks * quantizeN;

        const Tensor scaleFloat =
            scales.dtype() == DataType::Float ? scales : scales.castTo(DataType::Float);
        const float* scale = scaleFloat.data<float>();
        const auto* codes = static_cast<const std::uint8_t*>(data.raw());
        const auto* zeroCodes =
            zeroPoints ? static_cast<const std::uint8_t*>(zeroPoints->raw()) : nullptr;
        const int bits = static_cast<int>(bits_);
        const int mask = (1 << bits) - 1;
        auto value = [&](std::int64_t i) -> std::int32_t {
            if (type == DataType::Int4) return static_cast<std::int8_t>(codes[i]);
            if (type == DataType::UInt4) return codes[i] & 0x0F;
            if (components == 1) return codes[i];
            const int shift = static_cast<int>(i % components) * bits;
            return (codes[i / components] >> shift) & mask;
        };
        auto zeroPoint = [&](std::int64_t s) -> std::int32_t {
            if (!zeroCodes) return packed ? 1 << (bits - 1) : 0;
            if (type == DataType::Int4) return static_cast<std::int8_t>(zeroCodes[s]);
            if (type == DataType::UInt4) return zeroCodes[s] & 0x0F;
            if (components == 1) return zeroCodes[s];
            const std::int64_t row = s / scaleBlock, within = s % scaleBlock;
            const std::int64_t perRow = (scaleBlock + components - 1) / components;
            const int shift = static_cast<int>(within % components) * bits;
            return (zeroCodes[row * perRow + within / components] >> shift) & mask;
        };
        float* out = y.data<float>();
        ctx.pool().parallelFor(
            gatherM * gatherN, 3.0 * static_cast<double>(slice),
            [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t t = begin; t < end; ++t) {
                    const std::int64_t m = t / gatherN;
                    std::int64_t index = indices.valueAsInt64(t % gatherN);
                    float* dst = out + t * slice;
                    require(index >= -axisDim && index < axisDim, [&] {
                        return "GatherBlockQuantized: input indices value " +
                               std::to_string(index) + " is outside [-" + std::to_string(axisDim) +
                               ", " + std::to_string(axisDim) + ")";
                    });
                    if (index < 0) index += axisDim;
                    const std::int64_t first = (m * axisDim + index) * slice;
                    for (std::int64_t i = 0; i < slice; ++i) {
                        const std::int64_t e = first + i;
                        const std::int64_t x = e / quantizeBlock;
                        const std::int64_t q = e % quantizeBlock / quantizeN;
                        const std::int64_t z = e % quantizeN;
                        const std::int64_t s = x * scaleBlock + q / blockSize_ * quantizeN + z;
                        dst[i] = static_cast<float>(value(e) - zeroPoint(s)) * scale[s];
                    }
                }
            });
        outputs[0] =
            Value(scales.dtype() == DataType::Float ? std::move(y) : y.castTo(scales.dtype()));
    }

  private:
    static std::int64_t axisOf(std::int64_t axis, std::int64_t rank, const char* name) {
        require(axis >= -rank && axis < rank, [&] {
            return std::string("GatherBlockQuantized: attribute ") + name + " " +
                   std::to_string(axis) + " is outside [-" + std::to_string(rank) + ", " +
                   std::to_string(rank) + ")";
        });
        return axis < 0 ? axis + rank : axis;
    }

    std::int64_t gatherAxis_, quantizeAxis_, blockSize_, bits_;
};

// ---- DynamicQuantizeMatMul ---------------------------------------------------------------------

class DynamicQuantizeMatMulKernel : public Kernel {
  public:
    explicit DynamicQuantizeMatMulKernel(const NodeInfo&) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 1);
        require(a.dtype() == DataType::Float, [&] {
            return std::string("DynamicQuantizeMatMul: input A must be float, got ") +
                   dataTypeName(a.dtype());
        });
        require(isEightBit(b.dtype()) && b.rank() == 2, [&] {
            return "DynamicQuantizeMatMul: input B must be int8 or uint8 [K, N], got " +
                   std::string(dataTypeName(b.dtype())) + " " + shapeToString(b.shape());
        });
        const std::int64_t k = b.dim(0), n = b.dim(1);
        require(a.rank() >= 1 && a.dim(a.rank() - 1) == k, [&] {
            return "DynamicQuantizeMatMul: input A " + shapeToString(a.shape()) +
                   " does not end in B's K = " + std::to_string(k);
        });
        const std::vector<float> bScale =
            scaleValues(inputTensor(inputs, 2), n, "DynamicQuantizeMatMul: input b_scale");
        const std::vector<std::int32_t> bZero =
            zeroPointValues(optionalInputTensor(inputs, 3), b.dtype(), n,
                            "DynamicQuantizeMatMul: input b_zero_point");
        const Tensor* bias = optionalInputTensor(inputs, 4);
        if (bias)
            require(bias->dtype() == DataType::Float && bias->shape() == Shape{n}, [&] {
                return "DynamicQuantizeMatMul: input bias must be float [" + std::to_string(n) +
                       "], got " + shapeToString(bias->shape());
            });

        // A's quantization: DynamicQuantizeLinear's parameters.
        const float* av = a.data<float>();
        float lo = 0.0f, hi = 0.0f;
        widenRangeWithZero(av, a.numel(), lo, hi);
        const UInt8Quantization aq = uint8QuantizationOf(lo, hi);
        const float aScale = aq.scale;
        const auto aZero = static_cast<std::int32_t>(aq.zeroPoint);
        const std::int64_t rows = k == 0 ? 0 : a.numel() / k;
        Tensor aQuantized(DataType::UInt8, {rows, k});
        quantizeToUInt8(av, 0, rows * k, aq.scale, aq.zeroPoint, aQuantized.data<std::uint8_t>());

        Tensor acc = integerProduct(ctx.pool(), dnnl_, aQuantized, aZero, b, bZero);
        Shape outShape = a.shape();
        outShape.back() = n;
        Tensor y(DataType::Float, outShape);
        const std::int32_t* in = acc.data<std::int32_t>();
        float* out = y.data<float>();
        const float* biasData = bias ? bias->data<float>() : nullptr;
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < n; ++c) {
                const float multiplier =
                    aScale * bScale[bScale.size() == 1 ? 0 : static_cast<std::size_t>(c)];
                float v = static_cast<float>(in[r * n + c]) * multiplier;
                out[r * n + c] = biasData ? v + biasData[c] : v;
            }
        if (rows == 0 && y.numel() > 0) {  // K = 0: the product is empty, only the bias remains
            for (std::int64_t i = 0; i < y.numel(); ++i) out[i] = biasData ? biasData[i % n] : 0.0f;
        }
        outputs[0] = Value(std::move(y));
    }

  private:
    DnnlInt8MatMul dnnl_;
};

// ---- QGemm -------------------------------------------------------------------------------------

class QGemmKernel : public Kernel {
  public:
    explicit QGemmKernel(const NodeInfo& node)
        : alpha_(node.getFloat("alpha", 1.0f)),
          transA_(node.getInt("transA", 0) != 0),
          transB_(node.getInt("transB", 0) != 0) {
        require(std::isfinite(alpha_), "QGemm: attribute alpha must be finite");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 3);
        require(isEightBit(a.dtype()) && a.rank() == 2, [&] {
            return "QGemm: input A must be int8 or uint8 2-D, got " +
                   std::string(dataTypeName(a.dtype())) + " " + shapeToString(a.shape());
        });
        require(isEightBit(b.dtype()) && b.rank() == 2, [&] {
            return "QGemm: input B must be int8 or uint8 2-D, got " +
                   std::string(dataTypeName(b.dtype())) + " " + shapeToString(b.shape());
        });
        const std::int64_t m = transA_ ? a.dim(1) : a.dim(0);
        const std::int64_t k = transA_ ? a.dim(0) : a.dim(1);
        const std::int64_t n = transB_ ? b.dim(0) : b.dim(1);
        require((transB_ ? b.dim(1) : b.dim(0)) == k, [&] {
            return "QGemm: inner dimensions differ: A " + shapeToString(a.shape()) +
                   (transA_ ? " (transA)" : "") + ", B " + shapeToString(b.shape()) +
                   (transB_ ? " (transB)" : "");
        });
        const std::vector<float> aScale =
            scaleValues(inputTensor(inputs, 1), 1, "QGemm: input a_scale");
        const std::vector<std::int32_t> aZero = zeroPointValues(
            optionalInputTensor(inputs, 2), a.dtype(), 1, "QGemm: input a_zero_point");
        const std::vector<float> bScale =
            scaleValues(inputTensor(inputs, 4), n, "QGemm: input b_scale");
        const Tensor* bZeroTensor = optionalInputTensor(inputs, 5);
        const std::vector<std::int32_t> bZero =
            zeroPointValues(bZeroTensor, b.dtype(), n, "QGemm: input b_zero_point");
        if (bZeroTensor)
            require(bZero.size() == bScale.size() || bZero.size() == 1 || bScale.size() == 1,
                    "QGemm: inputs b_scale and b_zero_point differ in size");
        const Tensor* c = optionalInputTensor(inputs, 6);
        const Tensor* yScaleTensor = optionalInputTensor(inputs, 7);
        const Tensor* yZeroTensor = optionalInputTensor(inputs, 8);
        float yScale = 1.0f;
        if (yScaleTensor) yScale = scaleValues(*yScaleTensor, 1, "QGemm: input y_scale")[0];
        if (yZeroTensor) {
            require(yScaleTensor, "QGemm: input y_zero_point needs y_scale");
            require(isEightBit(yZeroTensor->dtype()) && isScalarLike(*yZeroTensor),
                    "QGemm: input y_zero_point must be an int8 or uint8 scalar");
        }
        if (c) {
            require(c->dtype() == DataType::Int32, [&] {
                return std::string("QGemm: input C must be int32, got ") + dataTypeName(c->dtype());
            });
            require(c->rank() <= 2 && broadcastShapes(c->shape(), Shape{m, n}) == Shape{m, n}, [&] {
                return "QGemm: input C " + shapeToString(c->shape()) + " does not broadcast to [" +
                       std::to_string(m) + ", " + std::to_string(n) + "]";
            });
        }

        const Tensor aa = transA_ ? transposed(a) : a;
        const Tensor bb = transB_ ? transposed(b) : b;
        Tensor acc = integerProduct(ctx.pool(), dnnl_, aa, aZero[0], bb, bZero);
        std::int32_t* sum = acc.data<std::int32_t>();
        if (c) {
            const auto strides = broadcastStrides(c->shape(), Shape{m, n});
            const std::int32_t* cv = c->data<std::int32_t>();
            // Wraps around in 32 bits as ONNX Runtime's int32 accumulator does (a signed
            // overflow would be undefined here).
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    sum[i * n + j] = static_cast<std::int32_t>(
                        static_cast<std::uint32_t>(sum[i * n + j]) +
                        static_cast<std::uint32_t>(cv[i * strides[0] + j * strides[1]]));
        }
        std::vector<float> multiplier(bScale.size());
        for (std::size_t j = 0; j < bScale.size(); ++j) {
            multiplier[j] = alpha_ * aScale[0] * bScale[j];
            if (yScaleTensor) multiplier[j] /= yScale;
            // With an 8-bit output, a NaN or infinite factor would turn into NaN (inf * 0) on the
            // way to 8 bits, and converting NaN to an integer is undefined (a float output just
            // holds the NaN).
            require(!yZeroTensor || std::isfinite(multiplier[j]), [&] {
                return "QGemm: alpha * a_scale * b_scale" +
                       std::string(yScaleTensor ? " / y_scale" : "") + " is not finite (b_scale[" +
                       std::to_string(j) + "] " + std::to_string(bScale[j]) + ", a_scale " +
                       std::to_string(aScale[0]) +
                       (yScaleTensor ? ", y_scale " + std::to_string(yScale) : std::string()) + ")";
            });
        }
        auto scaleOf = [&](std::int64_t j) {
            return multiplier[multiplier.size() == 1 ? 0 : static_cast<std::size_t>(j)];
        };
        if (!yZeroTensor) {
            Tensor y(DataType::Float, {m, n});
            float* out = y.data<float>();
            for (std::int64_t i = 0; i < m * n; ++i)
                out[i] = static_cast<float>(sum[i]) * scaleOf(i % n);
            outputs[0] = Value(std::move(y));
            return;
        }
        const DataType yType = yZeroTensor->dtype();
        const float yZero = static_cast<float>(yZeroTensor->valueAsInt64(0));
        const float lo = yType == DataType::UInt8 ? 0.0f : -128.0f;
        const float hi = yType == DataType::UInt8 ? 255.0f : 127.0f;
        Tensor y(yType, {m, n});
        for (std::int64_t i = 0; i < m * n; ++i) {
            const float v = std::clamp(
                std::nearbyint(static_cast<float>(sum[i]) * scaleOf(i % n)) + yZero, lo, hi);
            if (yType == DataType::UInt8)
                y.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v);
            else
                y.data<std::int8_t>()[i] = static_cast<std::int8_t>(v);
        }
        outputs[0] = Value(std::move(y));
    }

  private:
    static Tensor transposed(const Tensor& x) {
        const std::int64_t r = x.dim(0), c = x.dim(1);
        Tensor t(x.dtype(), {c, r});
        const auto* in = static_cast<const std::uint8_t*>(x.raw());
        auto* out = static_cast<std::uint8_t*>(t.raw());
        for (std::int64_t i = 0; i < r; ++i)
            for (std::int64_t j = 0; j < c; ++j) out[j * r + i] = in[i * c + j];
        return t;
    }

    float alpha_;
    bool transA_, transB_;
    DnnlInt8MatMul dnnl_;
};

}  // namespace

void registerMsQuantizedMatMulOps(KernelRegistry& registry) {
    registry.add<GatherBlockQuantizedKernel>("GatherBlockQuantized", 1, kLatestOpset,
                                             kMicrosoftDomain);
    registry.add<DynamicQuantizeMatMulKernel>("DynamicQuantizeMatMul", 1, kLatestOpset,
                                              kMicrosoftDomain);
    registry.add<QGemmKernel>("QGemm", 1, kLatestOpset, kMicrosoftDomain);
}

}  // namespace onnxlens::engine::ops
