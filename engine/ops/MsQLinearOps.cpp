// ONNX Runtime's com.microsoft QOperator operators on 8-bit data (what quantize_static writes with
// quant_format=QOperator), per-tensor scales and zero points, uint8 or int8: QLinearAdd,
// QLinearMul (numpy broadcasting), QLinearSigmoid, QLinearLeakyRelu (256-entry tables),
// QLinearConcat and QLinearSoftmax. The pools are in MsQLinearPoolOps.cpp. Semantics:
// ONNX Runtime's ContribOperators.md and, where it is silent, its CPU kernels; the arithmetic
// follows theirs (MsQLinearCommon.h) so that whole quantized models agree with ONNX Runtime.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "Broadcast.h"
#include "MsQLinearCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {

namespace {

using namespace qlinear;

// ---------------------------------------------------------------------------------------------
// QLinearAdd, QLinearMul: C = quantize(op(dequantize(A), dequantize(B))). Inputs: A, A_scale,
// A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?.

enum class QLinearBinary { Add, Mul };

// QLinearAdd as MLAS computes it on x86 with AVX2 (ratios rA = sA / sC, rB = sB / sC, and
// fixed = zC - (rA * zA + rB * zB), all in float):
//   both operands vary along the span: c = round(fma(a, rA, fma(b, rB, fixed)));
//   one operand is one value along the span (s, with ratio rS; the other v, rV):
//     c = round(fma(v, rV, fixed + s * rS)), the product and the sum rounded separately.
// Written as separate statements so that no compiler contracts them differently.
struct AddRatios {
    float ra, rb, fixed;
    AddRatios(float sa, std::int32_t za, float sb, std::int32_t zb, float sc, std::int32_t zc)
        : ra(sa / sc), rb(sb / sc) {
        const float termA = ra * static_cast<float>(za);
        const float termB = rb * static_cast<float>(zb);
        const float terms = termA + termB;
        fixed = static_cast<float>(zc) - terms;
    }
};

template <class Q>
void addSpan(const Q* a, std::int64_t sa, const Q* b, std::int64_t sb, Q* out, std::int64_t n,
             const AddRatios& r) {
    if (sa != 0 && sb != 0) {
        // Locals: a store of Q (a byte type) may alias r's fields, which would keep the loop
        // from being vectorised.
        const float ra = r.ra, rb = r.rb, fixed = r.fixed;
        const Q* __restrict__ x = a;
        const Q* __restrict__ y = b;
        Q* __restrict__ z = out;
        std::int64_t i = 0;
#ifdef __AVX2__
        if (sa == 1 && sb == 1) {
            const __m256 vra = _mm256_set1_ps(ra), vrb = _mm256_set1_ps(rb);
            const __m256 vfixed = _mm256_set1_ps(fixed);
            auto eight = [&](std::int64_t k) {
                return _mm256_fmadd_ps(eightAsFloats(x + k), vra,
                                       _mm256_fmadd_ps(eightAsFloats(y + k), vrb, vfixed));
            };
            for (; i + 16 <= n; i += 16) storeSixteenRequantized(eight(i), eight(i + 8), z + i);
        }
#endif
        for (; i < n; ++i)
            z[i] = requantize<Q>(std::fma(static_cast<float>(x[i]), ra,
                                          std::fma(static_cast<float>(y[i]), rb, fixed)));
        return;
    }
    // One operand is one value along the span (ONNX Runtime takes A as that value when both are).
    const bool aIsOne = sa == 0;
    const float one = static_cast<float>(aIsOne ? *a : *b);
    const float oneTerm = one * (aIsOne ? r.ra : r.rb);
    const float base = r.fixed + oneTerm;
    const Q* v = aIsOne ? b : a;
    const std::int64_t sv = aIsOne ? sb : sa;
    const float rv = aIsOne ? r.rb : r.ra;
    std::int64_t i = 0;
#ifdef __AVX2__
    if (sv == 1) {
        const __m256 vrv = _mm256_set1_ps(rv), vbase = _mm256_set1_ps(base);
        auto eight = [&](std::int64_t k) {
            return _mm256_fmadd_ps(eightAsFloats(v + k), vrv, vbase);
        };
        for (; i + 16 <= n; i += 16) storeSixteenRequantized(eight(i), eight(i + 8), out + i);
    }
#endif
    for (; i < n; ++i) out[i] = requantize<Q>(std::fma(static_cast<float>(v[i * sv]), rv, base));
}

// QLinearMul as MLAS computes it on x86: c = round(float((a - zA) * (b - zB)) * r + zC), with
// r = (sA * sB) / sC in float, the product and the sum rounded separately.
template <class Q>
void mulSpan(const Q* a, std::int64_t sa, const Q* b, std::int64_t sb, Q* out, std::int64_t n,
             std::int32_t za, std::int32_t zb, float ratio, float zc) {
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int32_t product = (static_cast<std::int32_t>(a[i * sa]) - za) *
                                     (static_cast<std::int32_t>(b[i * sb]) - zb);
        const float scaled = static_cast<float>(product) * ratio;
        out[i] = requantize<Q>(scaled + zc);
    }
}

template <QLinearBinary Kind>
class QLinearBinaryKernel final : public Kernel {
  public:
    explicit QLinearBinaryKernel(const NodeInfo&) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = quantizedInput(inputs, 0, "A");
        const Tensor& b = quantizedInput(inputs, 3, "B");
        require(b.dtype() == a.dtype(), [&] {
            return inputLabel(3, "B") + " must have A's type " + dataTypeName(a.dtype()) +
                   ", got " + dataTypeName(b.dtype());
        });
        const float sa = scaleInput(inputs, 1, "A_scale");
        const float sb = scaleInput(inputs, 4, "B_scale");
        const float sc = scaleInput(inputs, 6, "C_scale");
        const std::int32_t za = zeroPointInput(inputs, 2, "A_zero_point", a.dtype(), false);
        const std::int32_t zb = zeroPointInput(inputs, 5, "B_zero_point", a.dtype(), false);
        const std::int32_t zc = zeroPointInput(inputs, 7, "C_zero_point", a.dtype(), false);
        const BroadcastPlan plan{&a.shape(), &b.shape()};
        outputs[0] = Value(dispatchQuantized8(a.dtype(), [&]<class Q>() {
            Tensor c(a.dtype(), plan.outputShape());
            const Q* pa = a.data<Q>();
            const Q* pb = b.data<Q>();
            Q* pc = c.data<Q>();
            if constexpr (Kind == QLinearBinary::Add) {
                const AddRatios ratios(sa, za, sb, zb, sc, zc);
                plan.parallelSpans(ctx, 4.0,
                                   [&](std::int64_t o, std::int64_t n, const std::int64_t* off,
                                       const std::int64_t* inner) {
                                       addSpan(pa + off[0], inner[0], pb + off[1], inner[1], pc + o,
                                               n, ratios);
                                   });
            } else {
                const float product = sa * sb;
                const float ratio = product / sc;
                plan.parallelSpans(ctx, 4.0,
                                   [&](std::int64_t o, std::int64_t n, const std::int64_t* off,
                                       const std::int64_t* inner) {
                                       mulSpan(pa + off[0], inner[0], pb + off[1], inner[1], pc + o,
                                               n, za, zb, ratio, static_cast<float>(zc));
                                   });
            }
            return c;
        }));
    }
};

// ---------------------------------------------------------------------------------------------
// 256-entry tables: y = table[x] for every 8-bit x. Built per run from the scales (256 values:
// cheaper than a cache lookup), as ONNX Runtime builds them when the scales are not constant.
// The entry of code x: quantizeValue(f(dequantizeValue(x)), with x's bit pattern as the index
// (int8 -128 at 128).

using Table = std::array<std::uint8_t, 256>;

template <class Q, class F>
Table buildTable(float xScale, std::int32_t xZero, float yScale, std::int32_t yZero, F&& f) {
    Table table{};
    for (int code = 0; code < 256; ++code) {
        const Q x = static_cast<Q>(static_cast<std::uint8_t>(code));
        const Q y = quantizeValue<Q>(f(dequantizeValue(x, xScale, xZero)), yScale, yZero);
        std::memcpy(&table[static_cast<std::size_t>(code)], &y, 1);
    }
    return table;
}

// Maps the bytes of `x` through `table` into a new tensor of x's type and shape.
Tensor applyTable(KernelContext& ctx, const Tensor& x, const Table& table) {
    Tensor y(x.dtype(), x.shape());
    const auto* in = static_cast<const std::uint8_t*>(x.raw());
    auto* out = static_cast<std::uint8_t*>(y.raw());
    ctx.pool().parallelFor(x.numel(), 1.0, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) out[i] = table[in[i]];
    });
    return y;
}

enum class QLinearLookup { Sigmoid, LeakyRelu };

// QLinearSigmoid, QLinearLeakyRelu (alpha, default 0.01): X, X_scale, X_zero_point?, Y_scale,
// Y_zero_point?. The function is evaluated in float on the 256 dequantized codes. (ONNX Runtime's
// sigmoid is MLAS's rational approximation, within a few float ulps of the exact value computed
// here: a code whose value falls that close to a rounding boundary can differ by one step.)
template <QLinearLookup Kind>
class QLinearLookupKernel final : public Kernel {
  public:
    explicit QLinearLookupKernel(const NodeInfo& node) : alpha_(node.getFloat("alpha", 0.01f)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = quantizedInput(inputs, 0, "X");
        const float xScale = scaleInput(inputs, 1, "X_scale");
        const std::int32_t xZero = zeroPointInput(inputs, 2, "X_zero_point", x.dtype(), false);
        const float yScale = scaleInput(inputs, 3, "Y_scale");
        const std::int32_t yZero = zeroPointInput(inputs, 4, "Y_zero_point", x.dtype(), false);
        const float alpha = alpha_;
        const Table table = dispatchQuantized8(x.dtype(), [&]<class Q>() {
            return buildTable<Q>(xScale, xZero, yScale, yZero, [alpha](float v) {
                if constexpr (Kind == QLinearLookup::Sigmoid)
                    return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v))));
                else
                    return v >= 0.0f ? v : alpha * v;
            });
        });
        outputs[0] = Value(applyTable(ctx, x, table));
    }

  private:
    float alpha_;
};

// ---------------------------------------------------------------------------------------------
// QLinearConcat (axis): Y_scale, Y_zero_point, then (tensor, scale, zero_point) per input. Each
// input is requantized to Y's parameters through a table (copied when its parameters are Y's).

class QLinearConcatKernel final : public Kernel {
  public:
    explicit QLinearConcatKernel(const NodeInfo& node) : axis_(node.getInt("axis")) {
        const int count = node.inputCount();
        require(count >= 5 && (count - 2) % 3 == 0, [&] {
            return "QLinearConcat takes Y_scale, Y_zero_point, then (tensor, scale, zero_point) "
                   "triples: 2 + 3k inputs with k >= 1, got " +
                   std::to_string(count);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(inputs.size() >= 5 && (inputs.size() - 2) % 3 == 0, [&] {
            return "QLinearConcat needs 2 + 3k inputs, got " + std::to_string(inputs.size());
        });
        const std::size_t count = (inputs.size() - 2) / 3;
        const float yScale = scaleInput(inputs, 0, "Y_scale");
        const Tensor* yZeroTensor = optionalInputTensor(inputs, 1);
        require(yZeroTensor != nullptr,
                [&] { return inputLabel(1, "Y_zero_point") + " is required"; });
        const DataType type = yZeroTensor->dtype();
        require(type == DataType::UInt8 || type == DataType::Int8, [&] {
            return inputLabel(1, "Y_zero_point") + " must be uint8 or int8, got " +
                   dataTypeName(type);
        });
        const std::int32_t yZero = zeroPointInput(inputs, 1, "Y_zero_point", type, true);

        std::vector<const Tensor*> parts(count);
        std::vector<Table> tables(count);
        std::vector<bool> copies(count);
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t at = 2 + 3 * k;
            const std::string name = "X" + std::to_string(k);
            const std::string scaleName = name + "_scale", zeroName = name + "_zero_point";
            const Tensor& part = quantizedInput(inputs, at, name.c_str());
            require(part.dtype() == type, [&] {
                return inputLabel(at, name.c_str()) + " must be " + dataTypeName(type) +
                       " like Y_zero_point, got " + dataTypeName(part.dtype());
            });
            const float scale = scaleInput(inputs, at + 1, scaleName.c_str());
            const std::int32_t zero = zeroPointInput(inputs, at + 2, zeroName.c_str(), type, true);
            parts[k] = &part;
            copies[k] = scale == yScale && zero == yZero;
            if (!copies[k])
                tables[k] = dispatchQuantized8(type, [&]<class Q>() {
                    return buildTable<Q>(scale, zero, yScale, yZero, [](float v) { return v; });
                });
        }

        // Shapes: one rank, equal dims except along the axis.
        const Tensor& first = *parts[0];
        require(first.rank() > 0,
                [&] { return "QLinearConcat: " + inputLabel(2, "X0") + " is a scalar"; });
        const std::int64_t axis = normalizeAxis(axis_, first.rank());
        Shape outShape = first.shape();
        outShape[static_cast<std::size_t>(axis)] = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const Tensor& part = *parts[k];
            auto label = [&] { return inputLabel(2 + 3 * k, ("X" + std::to_string(k)).c_str()); };
            require(part.rank() == first.rank(), [&] {
                return label() + " has rank " + std::to_string(part.rank()) + ", X0 has " +
                       std::to_string(first.rank());
            });
            for (std::int64_t d = 0; d < first.rank(); ++d)
                require(d == axis || part.dim(d) == first.dim(d), [&] {
                    return label() + " has shape " + shapeToString(part.shape()) +
                           ", which differs from X0's " + shapeToString(first.shape()) +
                           " outside axis " + std::to_string(axis);
                });
            std::int64_t& total = outShape[static_cast<std::size_t>(axis)];
            require(part.dim(axis) <= std::numeric_limits<std::int64_t>::max() - total,
                    "QLinearConcat: the output's axis size overflows");
            total += part.dim(axis);
        }
        Tensor y(type, outShape);
        auto* out = static_cast<std::uint8_t*>(y.raw());
        std::int64_t outer = 1;
        for (std::int64_t d = 0; d < axis; ++d) outer *= first.dim(d);
        const std::int64_t outRow = outer ? (y.numel() / outer) : 0;
        std::int64_t offset = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const Tensor& part = *parts[k];
            const std::int64_t row = outer ? part.numel() / outer : 0;
            const auto* in = static_cast<const std::uint8_t*>(part.raw());
            const Table& table = tables[k];
            const bool copy = copies[k];
            ctx.pool().parallelFor(outer, static_cast<double>(row),
                                   [&](std::int64_t begin, std::int64_t end) {
                                       for (std::int64_t o = begin; o < end; ++o) {
                                           const std::uint8_t* src = in + o * row;
                                           std::uint8_t* dst = out + o * outRow + offset;
                                           if (copy) {
                                               if (row) std::memcpy(dst, src, row);
                                               continue;
                                           }
                                           for (std::int64_t i = 0; i < row; ++i)
                                               dst[i] = table[src[i]];
                                       }
                                   });
            offset += row;
        }
        outputs[0] = Value(y);
    }

  private:
    std::int64_t axis_;
};

// ---------------------------------------------------------------------------------------------
// QLinearSoftmax (axis, opset): X, X_scale, x_zero_point?, y_scale, y_zero_point?. opset >= 13:
// softmax along `axis` (default -1); below 13: over all dims from `axis` on, flattened (default
// 1). ONNX Runtime's arithmetic, which this follows exactly:
//   - a float table e[c] = exp((c - 255 + shift) * x_scale) over the 256 codes, where shift =
//     max(0, log(FLT_MAX / D) - 5) / x_scale keeps the sum of D entries finite (D: the softmax
//     length); row by row the table is read shifted so that the row's largest code lands on 255
//     (x's zero point cancels and is not used);
//   - sum = the float sum of the row's entries, in order;
//   - y = round_half_even((e * floor(1 / y_scale)) / sum) + y_zero_point in float: the output
//     scale enters as the integer floor(1 / y_scale) (exact for 1/256, the scale quantizers give
//     a softmax), saturated to the type. (ONNX Runtime clamps int8 results only above 255, so a
//     probability of 1 with zero point -128 wraps to -128 there; the engine saturates to 127.)
class QLinearSoftmaxKernel final : public Kernel {
  public:
    explicit QLinearSoftmaxKernel(const NodeInfo& node) {
        require(node.hasAttribute("opset"),
                "QLinearSoftmax requires the attribute opset (13 or more: softmax along axis; "
                "below 13: over the dims from axis on, flattened)");
        opset_ = node.getInt("opset");
        axis_ = node.getInt("axis", opset_ < 13 ? 1 : -1);
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = quantizedInput(inputs, 0, "X");
        const float xScale = scaleInput(inputs, 1, "X_scale");
        zeroPointInput(inputs, 2, "x_zero_point", x.dtype(), false);  // checked, cancels out
        const float yScale = scaleInput(inputs, 3, "y_scale");
        const std::int32_t yZero = zeroPointInput(inputs, 4, "y_zero_point", x.dtype(), false);
        require(x.rank() > 0,
                [&] { return "QLinearSoftmax: " + inputLabel(0, "X") + " is a scalar"; });
        const std::int64_t axis = normalizeAxis(axis_, x.rank());

        // x as [outer, length, inner]: the softmax runs over `length` elements `inner` apart.
        std::int64_t outer = 1, length = 1, inner = 1;
        for (std::int64_t d = 0; d < x.rank(); ++d) {
            if (d < axis)
                outer *= x.dim(d);
            else if (d == axis || opset_ < 13)
                length *= x.dim(d);
            else
                inner *= x.dim(d);
        }
        Tensor y(x.dtype(), x.shape());
        if (x.numel() == 0) {
            outputs[0] = Value(y);
            return;
        }
        const bool isSigned = x.dtype() == DataType::Int8;
        const std::array<float, 256> table = expTable(xScale, length, isSigned);
        const float outScale = std::floor(1.0f / yScale);
        dispatchQuantized8(x.dtype(), [&]<class Q>() {
            const Q* in = x.data<Q>();
            Q* out = y.data<Q>();
            ctx.pool().parallelFor(
                outer * inner, 3.0 * static_cast<double>(length),
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t r = begin; r < end; ++r) {
                        const std::int64_t base = (r / inner) * length * inner + r % inner;
                        softmaxRow<Q>(in + base, out + base, length, inner, table, outScale, yZero);
                    }
                });
        });
        outputs[0] = Value(y);
    }

  private:
    // Entry i (0..255) holds exp((i - 255 + shift) * x_scale) at byte i (uint8) or at byte
    // i - 128 (int8), so that the byte 255 + (x - max) (uint8), 127 + (x - max) (int8) reads x's.
    static std::array<float, 256> expTable(float xScale, std::int64_t length, bool isSigned) {
        const float perElement = std::numeric_limits<float>::max() / static_cast<float>(length);
        double shift = std::log(static_cast<double>(perElement));
        shift = std::max(0.0, shift - 5.0) / static_cast<double>(xScale);
        std::array<float, 256> table{};
        for (int i = 0; i < 256; ++i) {
            const double e =
                std::exp((static_cast<double>(i) - 255.0 + shift) * static_cast<double>(xScale));
            const auto index = static_cast<std::uint8_t>(isSigned ? i - 128 : i);
            table[index] = static_cast<float>(e);
        }
        return table;
    }

    template <class Q>
    static void softmaxRow(const Q* in, Q* out, std::int64_t length, std::int64_t stride,
                           const std::array<float, 256>& table, float outScale,
                           std::int32_t yZero) {
        Q largest = in[0];
        for (std::int64_t i = 1; i < length; ++i) largest = std::max(largest, in[i * stride]);
        // The byte that reads x's entry: uint8: 255 - max + x; int8: 127 - max + x.
        const std::int32_t top = std::is_signed_v<Q> ? 127 : 255;
        const std::int32_t adjust = top - static_cast<std::int32_t>(largest);
        const auto entry = [&](std::int64_t i) {
            const auto code = static_cast<std::int32_t>(in[i * stride]) + adjust;
            return table[static_cast<std::uint8_t>(code)];
        };
        float sum = 0.0f;
        for (std::int64_t i = 0; i < length; ++i) sum += entry(i);
        for (std::int64_t i = 0; i < length; ++i) {
            if (!(sum > 0.0f) || !std::isfinite(sum)) {
                out[i * stride] = saturateTo<Q>(yZero);
                continue;
            }
            const float scaled = entry(i) * outScale;
            float ratio = scaled / sum;
            // A row of one element can overflow the product (ONNX Runtime's result is undefined
            // there); the same quotient, taken in the other order, is finite.
            if (!std::isfinite(ratio))
                ratio = static_cast<float>(static_cast<double>(entry(i)) / sum * outScale);
            out[i * stride] = saturateTo<Q>(std::int64_t{roundToInt32(ratio)} + yZero);
        }
    }

    std::int64_t opset_ = 13;
    std::int64_t axis_ = -1;
};

}  // namespace

void registerMsQLinearOps(KernelRegistry& registry) {
    registry.add<QLinearBinaryKernel<QLinearBinary::Add>>("QLinearAdd", 1, kLatestOpset, kMsDomain);
    registry.add<QLinearBinaryKernel<QLinearBinary::Mul>>("QLinearMul", 1, kLatestOpset, kMsDomain);
    registry.add<QLinearLookupKernel<QLinearLookup::Sigmoid>>("QLinearSigmoid", 1, kLatestOpset,
                                                              kMsDomain);
    registry.add<QLinearLookupKernel<QLinearLookup::LeakyRelu>>("QLinearLeakyRelu", 1, kLatestOpset,
                                                                kMsDomain);
    registry.add<QLinearConcatKernel>("QLinearConcat", 1, kLatestOpset, kMsDomain);
    registry.add<QLinearSoftmaxKernel>("QLinearSoftmax", 1, kLatestOpset, kMsDomain);
}

}  // namespace onnxlens::engine::ops
