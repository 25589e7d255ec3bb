#pragma once
// The shared machinery of one-input elementwise kernels (math functions in ElementwiseOps.cpp,
// activations in ActivationOps.cpp).
//
// An operation is a small struct deriving from UnaryOpTraits:
//   - `template <class T> auto operator()(T x) const` computes one element (float16/bfloat16
//     elements are handed over as float);
//   - with kVectorized, `template <class A> auto array(const A& x) const` builds the same
//     computation as an Eigen array expression, used on float/double buffers (and on float
//     blocks converted from float16/bfloat16) so Eigen's SIMD math applies;
//   - kTypes names the element types it accepts, kBoolResult says the output is bool.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics when Eigen's vectorised
// exp/log are inlined here (the intrinsics start from _mm512_undefined_ps on purpose).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "onnxlens/engine/DataType.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

enum class TypeSet {
    Float,          // float, double, float16, bfloat16
    SignedNumeric,  // floats and signed integers
    Numeric,        // floats and all integers
    NumericOrBool,  // numeric and bool
    Comparable,     // numeric, bool and string
    Unsigned,       // unsigned integers
    Integer,        // signed and unsigned integers
    Bool,
};

struct UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Float;
    static constexpr bool kVectorized = false;
    static constexpr bool kBoolResult = false;
    static constexpr double kCost = 1.0;  // rough operations per element, for the thread pool
};

template <class T>
inline constexpr bool isReducedFloat = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The type a scalar computation runs in: float for float16/bfloat16, T otherwise.
template <class T>
using ComputeType = std::conditional_t<isReducedFloat<T>, float, T>;

// Dispatches f over the C++ types of `set`, throwing a clear error for any other type.
template <TypeSet set, class F>
decltype(auto) dispatchTypeSet(DataType type, const char* op, F&& f) {
    if constexpr (set == TypeSet::Float) {
        if (isFloatingPoint(type)) return dispatchFloat(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::SignedNumeric) {
        if (isFloatingPoint(type) || isSignedInteger(type))
            return dispatchNumeric(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::Numeric) {
        if (isFloatingPoint(type) || isInteger(type))
            return dispatchNumeric(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::NumericOrBool) {
        if (isFloatingPoint(type) || isInteger(type) || type == DataType::Bool)
            return dispatchNumericOrBool(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::Comparable) {
        if (type == DataType::String) return f.template operator()<std::string>();
        if (isFloatingPoint(type) || isInteger(type) || type == DataType::Bool)
            return dispatchNumericOrBool(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::Unsigned) {
        if (isUnsignedInteger(type)) return dispatchInteger(type, std::forward<F>(f));
    } else if constexpr (set == TypeSet::Integer) {
        if (isInteger(type)) return dispatchInteger(type, std::forward<F>(f));
    } else {
        if (type == DataType::Bool) return f.template operator()<bool>();
    }
    fail(std::string(op) + ": unsupported input type " + dataTypeName(type));
}

// Converts a value to an integer type, saturating at its limits (NaN gives 0), so out-of-range
// values are defined instead of undefined behaviour.
template <class To>
To saturatingCast(double v) {
    if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool>) {
        if (std::isnan(v)) return To(0);
        if (v <= static_cast<double>(std::numeric_limits<To>::lowest()))
            return std::numeric_limits<To>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<To>::max()))
            return std::numeric_limits<To>::max();
        return static_cast<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

// Builds an operation object from its node when it has such a constructor (to read attributes
// once), default-constructs it otherwise.
template <class Op>
Op makeOp(const NodeInfo& node) {
    if constexpr (std::is_constructible_v<Op, const NodeInfo&>)
        return Op(node);
    else
        return Op{};
}

// NaN test that also accepts integer types.
template <class T>
bool isNaNValue(T x) {
    if constexpr (std::is_floating_point_v<T>)
        return std::isnan(x);
    else
        return false;
}

template <class T, class Op>
using UnaryResult = std::conditional_t<Op::kBoolResult, bool, T>;

// out[i] = op(in[i]) for one contiguous block.
template <class T, class R, class Op>
void unarySpan(const T* in, R* out, std::int64_t n, const Op& op) {
    using ArrayT = Eigen::Array<T, Eigen::Dynamic, 1>;
    if constexpr (Op::kVectorized &&
                  (std::is_same_v<T, float> || std::is_same_v<T, double>)&&std::is_same_v<T, R>) {
        Eigen::Map<ArrayT>(out, n) = op.array(Eigen::Map<const ArrayT>(in, n));
    } else if constexpr (Op::kVectorized && isReducedFloat<T> && std::is_same_v<T, R>) {
        // Convert blocks to float, run the float expression, convert back.
        constexpr std::int64_t kBlock = 256;
        alignas(64) float buffer[kBlock];
        using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
        for (std::int64_t start = 0; start < n; start += kBlock) {
            const std::int64_t len = std::min(kBlock, n - start);
            Eigen::Map<ArrayF> block(buffer, len);
            block = Eigen::Map<const ArrayT>(in + start, len).template cast<float>();
            block = op.array(block).eval();
            Eigen::Map<ArrayT>(out + start, len) = block.template cast<T>();
        }
    } else {
        for (std::int64_t i = 0; i < n; ++i)
            out[i] = static_cast<R>(op(static_cast<ComputeType<T>>(in[i])));
    }
}

// A new tensor holding op(x) elementwise, split over the thread pool when large.
template <class T, class Op>
Tensor unaryTransform(KernelContext& ctx, const Tensor& x, const Op& op) {
    using R = UnaryResult<T, Op>;
    Tensor out(dataTypeOf<R>, x.shape());
    const T* in = x.data<T>();
    R* po = out.data<R>();
    ctx.pool().parallelFor(x.numel(), Op::kCost, [&](std::int64_t begin, std::int64_t end) {
        unarySpan<T, R>(in + begin, po + begin, end - begin, op);
    });
    return out;
}

// The kernel of a one-input, one-output elementwise operator. Op is built from the node (to
// read attributes once) when it has such a constructor, default-constructed otherwise.
template <class Op>
class UnaryKernel final : public Kernel {
  public:
    explicit UnaryKernel(const NodeInfo& node) : op_(makeOp<Op>(node)), name_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        dispatchTypeSet<Op::kTypes>(x.dtype(), name_.c_str(), [&]<class T>() {
            outputs[0] = Value(unaryTransform<T>(ctx, x, op_));
        });
    }

  private:
    Op op_;
    std::string name_;
};

}  // namespace onnxlens::engine::ops
