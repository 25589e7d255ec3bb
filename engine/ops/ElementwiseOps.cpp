// Elementwise math: unary functions, binary arithmetic/comparison/logic with numpy broadcasting,
// the variadic Max/Min/Sum/Mean, Where and Clip.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unsupported/Eigen/SpecialFunctions>

#include "Broadcast.h"
#include "ElementwiseUnary.h"
#include "OpFamilies.h"
#include "SubnormalFreeMath.h"

namespace onnxlens::engine::ops {

namespace {

// Two's-complement negation without signed-overflow undefined behaviour (-INT_MIN wraps).
template <class T>
T wrappingNegate(T x) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
    else
        return -x;
}

// ---------------------------------------------------------------------------------------------
// Unary math

struct AbsOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Numeric;
    static constexpr bool kVectorized = true;
    template <class T>
    T operator()(T x) const {
        if constexpr (std::is_unsigned_v<T>)
            return x;
        else
            return x < T(0) ? wrappingNegate(x) : x;
    }
    template <class A>
    auto array(const A& x) const {
        return x.abs();
    }
};

struct NegOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::SignedNumeric;
    static constexpr bool kVectorized = true;
    template <class T>
    T operator()(T x) const {
        return wrappingNegate(x);
    }
    template <class A>
    auto array(const A& x) const {
        return -x;
    }
};

struct SignOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Numeric;
    // NaN stays NaN, as in numpy.
    template <class T>
    T operator()(T x) const {
        if constexpr (std::is_unsigned_v<T>)
            return x > T(0) ? T(1) : T(0);
        else
            return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
    }
};

// Float functions that Eigen vectorises: one struct per function, named after the ONNX op.
#define ONNXLENS_EIGEN_UNARY(NAME, COST, EXPR, SCALAR) \
    struct NAME##Op : UnaryOpTraits {                  \
        static constexpr bool kVectorized = true;      \
        static constexpr double kCost = COST;          \
        template <class T>                             \
        T operator()(T x) const {                      \
            return SCALAR;                             \
        }                                              \
        template <class A>                             \
        auto array(const A& x) const {                 \
            return EXPR;                               \
        }                                              \
    };
ONNXLENS_EIGEN_UNARY(Exp, 10, x.unaryExpr(ExpWithoutSubnormals{}), std::exp(x))
ONNXLENS_EIGEN_UNARY(Log, 10, x.log(), std::log(x))
ONNXLENS_EIGEN_UNARY(Sqrt, 4, x.sqrt(), std::sqrt(x))
ONNXLENS_EIGEN_UNARY(Reciprocal, 4, x.inverse(), T(1) / x)
ONNXLENS_EIGEN_UNARY(Floor, 1, x.floor(), std::floor(x))
ONNXLENS_EIGEN_UNARY(Ceil, 1, x.ceil(), std::ceil(x))
ONNXLENS_EIGEN_UNARY(Round, 1, x.rint(), std::nearbyint(x))  // halves to even, as numpy
ONNXLENS_EIGEN_UNARY(Sin, 10, x.sin(), std::sin(x))
ONNXLENS_EIGEN_UNARY(Cos, 10, x.cos(), std::cos(x))
ONNXLENS_EIGEN_UNARY(Tan, 15, x.tan(), std::tan(x))
ONNXLENS_EIGEN_UNARY(Asin, 15, x.asin(), std::asin(x))
ONNXLENS_EIGEN_UNARY(Acos, 15, x.acos(), std::acos(x))
ONNXLENS_EIGEN_UNARY(Atan, 15, x.atan(), std::atan(x))
ONNXLENS_EIGEN_UNARY(Sinh, 15, x.sinh(), std::sinh(x))
ONNXLENS_EIGEN_UNARY(Cosh, 15, x.cosh(), std::cosh(x))
ONNXLENS_EIGEN_UNARY(Erf, 10, x.erf(), std::erf(x))
#undef ONNXLENS_EIGEN_UNARY

// Float functions computed one element at a time.
#define ONNXLENS_SCALAR_UNARY(NAME, FN)     \
    struct NAME##Op : UnaryOpTraits {       \
        static constexpr double kCost = 20; \
        template <class T>                  \
        T operator()(T x) const {           \
            return std::FN(x);              \
        }                                   \
    };
ONNXLENS_SCALAR_UNARY(Asinh, asinh)
ONNXLENS_SCALAR_UNARY(Acosh, acosh)
ONNXLENS_SCALAR_UNARY(Atanh, atanh)
#undef ONNXLENS_SCALAR_UNARY

struct IsNaNOp : UnaryOpTraits {
    static constexpr bool kBoolResult = true;
    template <class T>
    bool operator()(T x) const {
        return std::isnan(x);
    }
};

struct IsInfOp : UnaryOpTraits {
    static constexpr bool kBoolResult = true;
    explicit IsInfOp(const NodeInfo& node)
        : negative(node.getInt("detect_negative", 1) != 0),
          positive(node.getInt("detect_positive", 1) != 0) {}
    template <class T>
    bool operator()(T x) const {
        return std::isinf(x) && (x > 0 ? positive : negative);
    }
    bool negative, positive;
};

struct NotOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Bool;
    bool operator()(bool x) const { return !x; }
};

struct BitwiseNotOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Integer;
    template <class T>
    T operator()(T x) const {
        return static_cast<T>(~x);
    }
};

// ---------------------------------------------------------------------------------------------
// Binary operators

// Opset < 7 binary operators broadcast only B, and only with broadcast=1; with `axis`, B's dims
// line up with A's starting at that axis instead of at the end.
class LegacyBroadcast {
  public:
    explicit LegacyBroadcast(const NodeInfo& node) {
        if (node.opsetVersion() < 7 && node.getInt("broadcast", 0) != 0 &&
            node.hasAttribute("axis"))
            axis_ = node.getInt("axis");
    }
    Tensor align(const Tensor& a, const Tensor& b) const {
        if (!axis_ || b.rank() == 0) return b;
        const std::int64_t axis = normalizeAxis(*axis_, a.rank());
        require(axis + b.rank() <= a.rank(), [&] {
            return "broadcast axis " + std::to_string(*axis_) + " leaves no room for B of shape " +
                   shapeToString(b.shape()) + " against A of shape " + shapeToString(a.shape());
        });
        Shape shape = b.shape();
        shape.resize(static_cast<std::size_t>(a.rank() - axis), 1);
        return b.reshaped(shape);
    }

  private:
    std::optional<std::int64_t> axis_;
};

// Wraps a computation on ComputeType values into one on stored elements.
template <class T, class R, class Op>
auto elementFunction(const Op& op) {
    if constexpr (isReducedFloat<T>)
        return [op](T a, T b) -> R {
            return static_cast<R>(op(static_cast<float>(a), static_cast<float>(b)));
        };
    else if constexpr (std::is_same_v<T, std::string>)
        return [op](const T& a, const T& b) -> R { return op(a, b); };
    else
        return [op](T a, T b) -> R { return static_cast<R>(op(a, b)); };
}

template <class T>
void requireNonZeroDivisors(const Tensor& divisor, const std::string& op) {
    if constexpr (std::is_integral_v<T>) {
        for (const T v : divisor.span<T>())
            if (v == T(0)) fail(op + ": integer division by zero");
    }
}

struct BinaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Numeric;
    static constexpr bool kBoolResult = false;
    static constexpr bool kIntegerDivision = false;  // integer divisors must be non-zero
    static constexpr double kCost = 1.0;
};

struct AddOp : BinaryOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>)  // wraps like numpy instead of overflowing
            return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                                  static_cast<std::make_unsigned_t<T>>(b));
        else
            return a + b;
    }
};
struct SubOp : BinaryOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>)
            return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) -
                                  static_cast<std::make_unsigned_t<T>>(b));
        else
            return a - b;
    }
};
struct MulOp : BinaryOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            // Multiplying in a wide unsigned type avoids both overflow UB and int promotion.
            using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                         std::make_unsigned_t<T>>;
            return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
        } else {
            return a * b;
        }
    }
};
struct DivOp : BinaryOpTraits {
    static constexpr bool kIntegerDivision = true;
    static constexpr double kCost = 2.0;
    template <class T>
    T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
            return b == T(-1) ? wrappingNegate(a) : static_cast<T>(a / b);
        else
            return static_cast<T>(a / b);
    }
};

// Mod: with fmod the remainder takes the dividend's sign (C fmod); without, the divisor's
// (Python %).
struct ModOp : BinaryOpTraits {
    static constexpr bool kIntegerDivision = true;
    static constexpr double kCost = 4.0;
    explicit ModOp(const NodeInfo& node) : fmod(node.getInt("fmod", 0) != 0) {}
    template <class T>
    T operator()(T a, T b) const {
        if constexpr (std::is_unsigned_v<T>) {
            return static_cast<T>(a % b);
        } else {
            T r;
            if constexpr (std::is_floating_point_v<T>)
                r = std::fmod(a, b);
            else
                r = b == T(-1) ? T(0) : static_cast<T>(a % b);
            if (!fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
            return r;
        }
    }
    bool fmod;
};

struct BitShiftOp : BinaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Unsigned;
    explicit BitShiftOp(const NodeInfo& node) {
        const std::string direction = node.getString("direction");
        require(direction == "LEFT" || direction == "RIGHT", [&] {
            return "BitShift: direction must be LEFT or RIGHT, got '" + direction + "'";
        });
        left = direction == "LEFT";
    }
    template <class T>
    T operator()(T a, T b) const {
        if (b >= T(sizeof(T) * 8)) return T(0);  // shifting out every bit (and no UB)
        return left ? static_cast<T>(a << b) : static_cast<T>(a >> b);
    }
    bool left;
};

struct LogicOpTraits : BinaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Bool;
    static constexpr bool kBoolResult = true;
};
struct AndOp : LogicOpTraits {
    bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : LogicOpTraits {
    bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : LogicOpTraits {
    bool operator()(bool a, bool b) const { return a != b; }
};

// Opset 18's bitwise operators, on the two's complement bits of any integer type.
struct BitwiseOpTraits : BinaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Integer;
};
struct BitwiseAndOp : BitwiseOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        return static_cast<T>(a & b);
    }
};
struct BitwiseOrOp : BitwiseOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        return static_cast<T>(a | b);
    }
};
struct BitwiseXorOp : BitwiseOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        return static_cast<T>(a ^ b);
    }
};

struct CompareOpTraits : BinaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::NumericOrBool;
    static constexpr bool kBoolResult = true;
};
struct EqualOp : CompareOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Comparable;
    template <class T>
    bool operator()(const T& a, const T& b) const {
        return a == b;
    }
};
struct LessOp : CompareOpTraits {
    template <class T>
    bool operator()(T a, T b) const {
        return a < b;
    }
};
struct LessOrEqualOp : CompareOpTraits {
    template <class T>
    bool operator()(T a, T b) const {
        return a <= b;
    }
};
struct GreaterOp : CompareOpTraits {
    template <class T>
    bool operator()(T a, T b) const {
        return a > b;
    }
};
struct GreaterOrEqualOp : CompareOpTraits {
    template <class T>
    bool operator()(T a, T b) const {
        return a >= b;
    }
};

// Max/Min propagate NaN from either side, as numpy.maximum/minimum do.
struct MaxOp : BinaryOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        return (a > b || isNaNValue(a)) ? a : b;
    }
};
struct MinOp : BinaryOpTraits {
    template <class T>
    T operator()(T a, T b) const {
        return (a < b || isNaNValue(a)) ? a : b;
    }
};

std::string typeMismatch(const std::string& op, const Tensor& a, const Tensor& b) {
    return op + ": inputs have different element types (" + dataTypeName(a.dtype()) + " and " +
           dataTypeName(b.dtype()) + ")";
}

// Broadcasts a and b (same element type) and applies Op elementwise.
template <class Op>
Tensor applyBinary(KernelContext& ctx, const Op& op, const std::string& name, const Tensor& a,
                   const Tensor& b) {
    if (a.dtype() != b.dtype()) fail(typeMismatch(name, a, b));  // the message only on failure
    Tensor result;
    dispatchTypeSet<Op::kTypes>(a.dtype(), name.c_str(), [&]<class T>() {
        using R = std::conditional_t<Op::kBoolResult, bool, T>;
        if constexpr (Op::kIntegerDivision) requireNonZeroDivisors<T>(b, name);
        result = broadcastBinary<T, T, R>(ctx, a, b, Op::kCost, elementFunction<T, R>(op));
    });
    return result;
}

template <class Op>
class BinaryKernel final : public Kernel {
  public:
    explicit BinaryKernel(const NodeInfo& node)
        : op_(makeOp<Op>(node)), legacy_(node), name_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor b = legacy_.align(a, inputTensor(inputs, 1));
        outputs[0] = Value(applyBinary(ctx, op_, name_, a, b));
    }

  private:
    Op op_;
    LegacyBroadcast legacy_;
    std::string name_;
};

// ---------------------------------------------------------------------------------------------
// Pow: the exponent may have another numeric type than the base; the result has the base's.

template <class T, class E>
T powElement(T base, E exponent) {
    if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
        // Exact integer power by squaring, wrapping on overflow like numpy.
        if constexpr (std::is_signed_v<E>) {
            if (exponent < 0) {
                if (base == T(1)) return T(1);
                if constexpr (std::is_signed_v<T>)
                    if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
                return T(0);
            }
        }
        using U = std::make_unsigned_t<T>;
        U result = 1, factor = static_cast<U>(base);
        auto e = static_cast<std::make_unsigned_t<E>>(exponent);
        while (e != 0) {
            if (e & 1u) result = static_cast<U>(result * factor);
            factor = static_cast<U>(factor * factor);
            e >>= 1;
        }
        return static_cast<T>(result);
    } else if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
        return std::pow(base, exponent);
    } else {
        const double r = std::pow(toDouble(base), toDouble(exponent));
        if constexpr (std::is_integral_v<T>)
            return saturatingCast<T>(r);
        else
            return static_cast<T>(r);
    }
}

// x ** c for one constant exponent, with the exponents common in exported graphs made cheap.
struct SquareOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    template <class C>
    C operator()(C x) const {
        return x * x;
    }
    template <class A>
    auto array(const A& x) const {
        return x.square();
    }
};

struct PowByConstantOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    double exponent;
    template <class C>
    C operator()(C x) const {
        return powElement(x, static_cast<C>(exponent));
    }
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x.pow(static_cast<S>(exponent));
    }
};

class PowKernel final : public Kernel {
  public:
    explicit PowKernel(const NodeInfo& node) : legacy_(node) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& base = inputTensor(inputs, 0);
        const Tensor exponent = legacy_.align(base, inputTensor(inputs, 1));
        require(base.dtype() != DataType::Bool, "Pow: bool base is not supported");
        dispatchTypeSet<TypeSet::Numeric>(base.dtype(), "Pow", [&]<class T>() {
            if constexpr (std::is_floating_point_v<ComputeType<T>>) {
                if (exponent.numel() == 1 && exponent.rank() <= base.rank()) {
                    outputs[0] = Value(powByScalar<T>(ctx, base, exponent.valueAsDouble(0)));
                    return;
                }
            }
            // Exponents are widened to one type per case (float^float stays in float) to keep
            // the number of instantiated loops small; pow runs in double otherwise anyway.
            require(isFloatingPoint(exponent.dtype()) || isInteger(exponent.dtype()), [&] {
                return std::string("Pow: unsupported exponent type ") +
                       dataTypeName(exponent.dtype());
            });
            const auto apply = [&]<class E>(const Tensor& e) {
                outputs[0] = Value(broadcastBinary<T, E, T>(ctx, base, e, 10.0, [](T a, E b) {
                    if constexpr (isReducedFloat<T>)
                        return static_cast<T>(powElement(static_cast<float>(a), b));
                    else
                        return powElement(a, b);
                }));
            };
            if (exponent.dtype() == DataType::Float && std::is_same_v<ComputeType<T>, float>)
                apply.template operator()<float>(exponent);
            else if (isInteger(exponent.dtype()) && std::is_integral_v<T>)
                apply.template operator()<std::int64_t>(exponent.castTo(DataType::Int64));
            else
                apply.template operator()<double>(exponent.castTo(DataType::Double));
        });
    }

  private:
    template <class T>
    static Tensor powByScalar(KernelContext& ctx, const Tensor& base, double e) {
        if (e == 2.0) return unaryTransform<T>(ctx, base, SquareOp{});
        if (e == 0.5) return unaryTransform<T>(ctx, base, SqrtOp{});
        if (e == 1.0) return base.clone();
        return unaryTransform<T>(ctx, base, PowByConstantOp{{}, e});
    }
    LegacyBroadcast legacy_;
};

// ---------------------------------------------------------------------------------------------
// Variadic Max, Min, Sum, Mean: every input broadcast to one shape.

template <class Op, TypeSet kTypes, bool kMean = false>
class VariadicKernel final : public Kernel {
  public:
    explicit VariadicKernel(const NodeInfo& node) : name_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(!inputs.empty(), [&] { return name_ + ": needs at least one input"; });
        const Tensor& first = inputTensor(inputs, 0);
        dispatchTypeSet<kTypes>(first.dtype(), name_.c_str(), [&]<class T>() {
            Tensor acc = first;
            const auto combine = elementFunction<T, T>(Op{});
            for (std::size_t i = 1; i < inputs.size(); ++i) {
                const Tensor& next = inputTensor(inputs, i);
                if (next.dtype() != first.dtype()) fail(typeMismatch(name_, first, next));
                acc = broadcastBinary<T, T, T>(ctx, acc, next, 1.0, combine);
            }
            if constexpr (kMean) {
                if (inputs.size() > 1) acc = divideInPlace<T>(ctx, std::move(acc), inputs.size());
            }
            outputs[0] = Value(acc);
        });
    }

  private:
    template <class T>
    static Tensor divideInPlace(KernelContext& ctx, Tensor acc, std::size_t n) {
        T* data = acc.data<T>();
        const ComputeType<T> count = static_cast<ComputeType<T>>(n);
        ctx.pool().parallelFor(acc.numel(), 1.0, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i)
                data[i] = static_cast<T>(static_cast<ComputeType<T>>(data[i]) / count);
        });
        return acc;
    }
    std::string name_;
};

// ---------------------------------------------------------------------------------------------
// Where(condition, X, Y)

class WhereKernel final : public Kernel {
  public:
    explicit WhereKernel(const NodeInfo&) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& cond = inputTensor(inputs, 0);
        const Tensor& x = inputTensor(inputs, 1);
        const Tensor& y = inputTensor(inputs, 2);
        if (cond.dtype() != DataType::Bool)
            fail(std::string("Where: condition must be bool, got ") + dataTypeName(cond.dtype()));
        if (x.dtype() != y.dtype()) fail(typeMismatch("Where", x, y));
        BroadcastPlan plan{&cond.shape(), &x.shape(), &y.shape()};
        Tensor out(x.dtype(), plan.outputShape());
        dispatchBySize(x.dtype(), [&]<class U>() {
            const bool* pc = cond.data<bool>();
            const U* px = static_cast<const U*>(x.raw());
            const U* py = static_cast<const U*>(y.raw());
            U* po = static_cast<U*>(out.raw());
            plan.parallelSpans(ctx, 1.0,
                               [&](std::int64_t o, std::int64_t n, const std::int64_t* off,
                                   const std::int64_t* step) {
                                   const bool* c = pc + off[0];
                                   const U* xs = px + off[1];
                                   const U* ys = py + off[2];
                                   for (std::int64_t i = 0; i < n; ++i)
                                       po[o + i] =
                                           c[i * step[0]] ? xs[i * step[1]] : ys[i * step[2]];
                               });
        });
        outputs[0] = Value(out);
    }
};

// ---------------------------------------------------------------------------------------------
// Clip: bounds are attributes before opset 11, optional scalar inputs from 11 on.

template <class C>
struct ClampOp : UnaryOpTraits {
    C low, high;
    // min > max gives max everywhere, as the spec says; NaN passes through.
    C operator()(C x) const {
        const C y = x < low ? low : x;
        return y > high ? high : y;
    }
};

class ClipKernel final : public Kernel {
  public:
    explicit ClipKernel(const NodeInfo& node) : opset_(node.opsetVersion()) {
        if (opset_ < 11) {
            minAttribute_ = node.getFloat("min", -std::numeric_limits<float>::infinity());
            maxAttribute_ = node.getFloat("max", std::numeric_limits<float>::infinity());
        }
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        dispatchTypeSet<TypeSet::Numeric>(x.dtype(), "Clip", [&]<class T>() {
            using C = ComputeType<T>;
            ClampOp<C> clamp;
            clamp.low = std::numeric_limits<C>::lowest();
            clamp.high = std::numeric_limits<C>::max();
            if constexpr (std::is_floating_point_v<C>) {
                clamp.low = -std::numeric_limits<C>::infinity();
                clamp.high = std::numeric_limits<C>::infinity();
            }
            if (opset_ < 11) {
                clamp.low = saturatingCast<C>(static_cast<double>(minAttribute_));
                clamp.high = saturatingCast<C>(static_cast<double>(maxAttribute_));
            } else {
                if (const Tensor* m = optionalInputTensor(inputs, 1))
                    clamp.low = bound<T>(x, *m, "min");
                if (const Tensor* m = optionalInputTensor(inputs, 2))
                    clamp.high = bound<T>(x, *m, "max");
            }
            outputs[0] = Value(unaryTransform<T>(ctx, x, clamp));
        });
    }

  private:
    template <class T>
    static ComputeType<T> bound(const Tensor& x, const Tensor& b, const char* which) {
        require(b.dtype() == x.dtype(), [&] {
            return std::string("Clip: ") + which + " has type " + dataTypeName(b.dtype()) +
                   ", input has " + dataTypeName(x.dtype());
        });
        require(b.numel() == 1, [&] {
            return std::string("Clip: ") + which + " must be a scalar, got shape " +
                   shapeToString(b.shape());
        });
        return static_cast<ComputeType<T>>(b.data<T>()[0]);
    }
    int opset_;
    float minAttribute_ = 0, maxAttribute_ = 0;
};

}  // namespace

void registerElementwiseOps(KernelRegistry& registry) {
    registry.add<UnaryKernel<AbsOp>>("Abs");
    registry.add<UnaryKernel<NegOp>>("Neg");
    registry.add<UnaryKernel<SignOp>>("Sign");
    registry.add<UnaryKernel<ExpOp>>("Exp");
    registry.add<UnaryKernel<LogOp>>("Log");
    registry.add<UnaryKernel<SqrtOp>>("Sqrt");
    registry.add<UnaryKernel<ReciprocalOp>>("Reciprocal");
    registry.add<UnaryKernel<FloorOp>>("Floor");
    registry.add<UnaryKernel<CeilOp>>("Ceil");
    registry.add<UnaryKernel<RoundOp>>("Round");
    registry.add<UnaryKernel<SinOp>>("Sin");
    registry.add<UnaryKernel<CosOp>>("Cos");
    registry.add<UnaryKernel<TanOp>>("Tan");
    registry.add<UnaryKernel<AsinOp>>("Asin");
    registry.add<UnaryKernel<AcosOp>>("Acos");
    registry.add<UnaryKernel<AtanOp>>("Atan");
    registry.add<UnaryKernel<SinhOp>>("Sinh");
    registry.add<UnaryKernel<CoshOp>>("Cosh");
    registry.add<UnaryKernel<AsinhOp>>("Asinh");
    registry.add<UnaryKernel<AcoshOp>>("Acosh");
    registry.add<UnaryKernel<AtanhOp>>("Atanh");
    registry.add<UnaryKernel<ErfOp>>("Erf");
    registry.add<UnaryKernel<IsNaNOp>>("IsNaN");
    registry.add<UnaryKernel<IsInfOp>>("IsInf");
    registry.add<UnaryKernel<NotOp>>("Not");

    registry.add<BinaryKernel<AddOp>>("Add");
    registry.add<BinaryKernel<SubOp>>("Sub");
    registry.add<BinaryKernel<MulOp>>("Mul");
    registry.add<BinaryKernel<DivOp>>("Div");
    registry.add<BinaryKernel<ModOp>>("Mod");
    registry.add<BinaryKernel<BitShiftOp>>("BitShift");
    registry.add<BinaryKernel<BitwiseAndOp>>("BitwiseAnd", 18);
    registry.add<BinaryKernel<BitwiseOrOp>>("BitwiseOr", 18);
    registry.add<BinaryKernel<BitwiseXorOp>>("BitwiseXor", 18);
    registry.add<UnaryKernel<BitwiseNotOp>>("BitwiseNot", 18);
    registry.add<BinaryKernel<AndOp>>("And");
    registry.add<BinaryKernel<OrOp>>("Or");
    registry.add<BinaryKernel<XorOp>>("Xor");
    registry.add<BinaryKernel<EqualOp>>("Equal");
    registry.add<BinaryKernel<LessOp>>("Less");
    registry.add<BinaryKernel<LessOrEqualOp>>("LessOrEqual");
    registry.add<BinaryKernel<GreaterOp>>("Greater");
    registry.add<BinaryKernel<GreaterOrEqualOp>>("GreaterOrEqual");
    registry.add<PowKernel>("Pow");

    registry.add<VariadicKernel<MaxOp, TypeSet::Numeric>>("Max");
    registry.add<VariadicKernel<MinOp, TypeSet::Numeric>>("Min");
    registry.add<VariadicKernel<AddOp, TypeSet::Float>>("Sum");
    registry.add<VariadicKernel<AddOp, TypeSet::Float, true>>("Mean");
    registry.add<WhereKernel>("Where");
    registry.add<ClipKernel>("Clip");
}

}  // namespace onnxlens::engine::ops
