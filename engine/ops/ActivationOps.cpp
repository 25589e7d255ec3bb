// Activations: pointwise nonlinearities, PRelu, and the normalising Softmax, LogSoftmax, Hardmax.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "Broadcast.h"
#include "ElementwiseUnary.h"
#include "GeluOp.h"
#include "OpFamilies.h"
#include "SubnormalFreeMath.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {

namespace {

// ---------------------------------------------------------------------------------------------
// Pointwise activations. `array` works on float/double Eigen arrays (S is their scalar type);
// operator() computes one element for the other types.

struct ReluOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::SignedNumeric;  // integers since opset 14
    static constexpr bool kVectorized = true;
    template <class T>
    T operator()(T x) const {
        return x > T(0) ? x : T(0);
    }
    template <class A>
    auto array(const A& x) const {
        return x.max(typename A::Scalar(0));
    }
};

struct LeakyReluOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    explicit LeakyReluOp(const NodeInfo& node) : alpha(node.getFloat("alpha", 0.01f)) {}
    template <class T>
    T operator()(T x) const {
        return x >= T(0) ? x : static_cast<T>(x * alpha);
    }
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x >= S(0)).select(x, x * S(alpha));
    }
    float alpha;
};

struct EluOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    explicit EluOp(const NodeInfo& node) : alpha(node.getFloat("alpha", 1.0f)) {}
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x >= S(0)).select(x, (x.exp() - S(1)) * S(alpha));
    }
    float alpha;
};

struct SeluOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    explicit SeluOp(const NodeInfo& node)
        : alpha(node.getFloat("alpha", 1.67326319217681884765625f)),
          gamma(node.getFloat("gamma", 1.05070102214813232421875f)) {}
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x > S(0)).select(x * S(gamma), (x.exp() * S(alpha) - S(alpha)) * S(gamma));
    }
    float alpha, gamma;
};

struct CeluOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    explicit CeluOp(const NodeInfo& node) : alpha(node.getFloat("alpha", 1.0f)) {
        require(alpha != 0.0f, "Celu: alpha must not be 0");
    }
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x.max(S(0)) + (((x / S(alpha)).exp() - S(1)) * S(alpha)).min(S(0));
    }
    float alpha;
};

struct SigmoidOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    template <class A>
    auto array(const A& x) const {
        return x.unaryExpr(LogisticWithoutSubnormals{});
    }
};

struct HardSigmoidOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    explicit HardSigmoidOp(const NodeInfo& node)
        : alpha(node.getFloat("alpha", 0.2f)), beta(node.getFloat("beta", 0.5f)) {}
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x * S(alpha) + S(beta)).max(S(0)).min(S(1));
    }
    float alpha, beta;
};

struct HardSwishOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x * (x * S(1.0 / 6.0) + S(0.5)).max(S(0)).min(S(1));
    }
};

struct TanhOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 10;
    template <class A>
    auto array(const A& x) const {
        return x.tanh();
    }
};

// log(1 + e^x) written as max(x, 0) + log1p(e^-|x|) so large |x| neither overflows nor loses bits.
struct SoftplusOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 20;
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x.max(S(0)) + (-x.abs()).unaryExpr(ExpWithoutSubnormals{}).log1p();
    }
};

// Swish (opset 24): x * sigmoid(alpha * x).
struct SwishOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 20;
    explicit SwishOp(const NodeInfo& node) : alpha(node.getFloat("alpha", 1.0f)) {}
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x / (S(1) + (x * S(-alpha)).unaryExpr(ExpWithoutSubnormals{}));
    }
    float alpha;
};

// x * tanh(softplus(x)), softplus written so that exp never overflows.
struct MishOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 30;
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x * (x.max(S(0)) + (-x.abs()).unaryExpr(ExpWithoutSubnormals{}).log1p()).tanh();
    }
    template <class T>
    T operator()(T x) const {
        return x * std::tanh(std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x))));
    }
};

struct SoftsignOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return x / (x.abs() + S(1));
    }
};

struct ThresholdedReluOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    explicit ThresholdedReluOp(const NodeInfo& node) : alpha(node.getFloat("alpha", 1.0f)) {}
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x > S(alpha)).select(x, S(0));
    }
    float alpha;
};

struct ShrinkOp : UnaryOpTraits {
    static constexpr TypeSet kTypes = TypeSet::Numeric;
    static constexpr bool kVectorized = true;
    explicit ShrinkOp(const NodeInfo& node)
        : bias(node.getFloat("bias", 0.0f)), lambd(node.getFloat("lambd", 0.5f)) {}
    // Integer inputs: computed in double, then converted back by the caller.
    template <class T>
    double operator()(T x) const {
        const double v = static_cast<double>(x);
        if (v < -lambd) return v + bias;
        if (v > lambd) return v - bias;
        return 0.0;
    }
    template <class A>
    auto array(const A& x) const {
        using S = typename A::Scalar;
        return (x < S(-lambd)).select(x + S(bias), (x > S(lambd)).select(x - S(bias), S(0)));
    }
    float bias, lambd;
};

// ---------------------------------------------------------------------------------------------
// PRelu: slope broadcast against x (numpy rules, unidirectional in the spec).

class PReluKernel final : public Kernel {
  public:
    explicit PReluKernel(const NodeInfo& node) : perChannelSlope_(node.opsetVersion() < 7) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        Tensor slope = inputTensor(inputs, 1);
        // Before opset 7 a 1-D slope holds one value per channel (dim 1), as PyTorch exports.
        if (perChannelSlope_ && slope.rank() == 1 && x.rank() >= 2 && slope.numel() > 1 &&
            slope.dim(0) == x.dim(1)) {
            Shape perChannel(static_cast<std::size_t>(x.rank() - 1), 1);
            perChannel[0] = slope.dim(0);
            slope = slope.reshaped(perChannel);
        }
        require(x.dtype() == slope.dtype(), [&] {
            return std::string("PRelu: slope type ") + dataTypeName(slope.dtype()) +
                   " differs from input type " + dataTypeName(x.dtype());
        });
        dispatchTypeSet<TypeSet::SignedNumeric>(x.dtype(), "PRelu", [&]<class T>() {
            using C = ComputeType<T>;
            Tensor y = broadcastBinary<T, T, T>(ctx, x, slope, 2.0, [](T a, T s) {
                const C v = static_cast<C>(a);
                return v < C(0) ? static_cast<T>(v * static_cast<C>(s)) : a;
            });
            require(y.shape() == x.shape(), [&] {
                return "PRelu: slope of shape " + shapeToString(slope.shape()) +
                       " does not broadcast to input shape " + shapeToString(x.shape());
            });
            outputs[0] = Value(y);
        });
    }

  private:
    bool perChannelSlope_;
};

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax.
//
// The input is seen as [outer, n, inner] with the normalisation over n. From opset 13 n is the
// size of `axis` (default -1); before, the input was coerced to 2-D at `axis` (default 1), so n
// is the product of the dims from `axis` on and inner is 1.

enum class NormKind { Softmax, LogSoftmax, Hardmax };

struct NormLayout {
    std::int64_t outer = 1, n = 1, inner = 1;
};

template <class T>
using ArrayXX = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;

// One [n x cols] column-major block whose columns are normalised (inner == 1, cols rows at once).
template <class T>
void normaliseColumns(NormKind kind, const T* in, T* out, std::int64_t n, std::int64_t cols) {
    Eigen::Map<const ArrayXX<T>> x(in, n, cols);
    Eigen::Map<ArrayXX<T>> y(out, n, cols);
    if (kind == NormKind::Hardmax) {
        y.setZero();
        for (std::int64_t c = 0; c < cols; ++c) {
            Eigen::Index best = 0;
            x.col(c).maxCoeff(&best);
            y(best, c) = T(1);
        }
        return;
    }
    const ArrayX<T> max = x.colwise().maxCoeff().transpose();
    if (kind == NormKind::Softmax) {
        // exp(x - max) in one pass, then one scaling pass (a wide Softmax, e.g. over 6,625
        // classes, is bound by its passes over the data).
        // Column by column: contiguous expressions Eigen vectorises.
        for (std::int64_t c = 0; c < cols; ++c) {
            y.col(c) = (x.col(c) - max(c)).unaryExpr(ExpWithoutSubnormals{});
            y.col(c) *= T(1) / y.col(c).sum();
        }
        return;
    }
    y = x.rowwise() - max.transpose();
    const ArrayX<T> logSum = y.unaryExpr(ExpWithoutSubnormals{}).colwise().sum().log().transpose();
    y.rowwise() -= logSum.transpose();
}

// One [inner x n] column-major block normalised along its rows (inner > 1).
template <class T>
void normaliseRows(NormKind kind, const T* in, T* out, std::int64_t inner, std::int64_t n) {
    Eigen::Map<const ArrayXX<T>> x(in, inner, n);
    Eigen::Map<ArrayXX<T>> y(out, inner, n);
    if (kind == NormKind::Hardmax) {
        y.setZero();
        for (std::int64_t r = 0; r < inner; ++r) {
            Eigen::Index best = 0;
            x.row(r).maxCoeff(&best);
            y(r, best) = T(1);
        }
        return;
    }
    const ArrayX<T> max = x.rowwise().maxCoeff();
    y = x.colwise() - max;
    if (kind == NormKind::Softmax) {
        y = y.unaryExpr(ExpWithoutSubnormals{});
        const ArrayX<T> sum = y.rowwise().sum();
        y.colwise() /= sum;
    } else {
        const ArrayX<T> logSum = y.unaryExpr(ExpWithoutSubnormals{}).rowwise().sum().log();
        y.colwise() -= logSum;
    }
}

template <class T>
void normalise(KernelContext& ctx, NormKind kind, const NormLayout& l, const T* in, T* out) {
    const double cost = 20.0 * static_cast<double>(l.n * l.inner);
    if (l.inner == 1) {
        ctx.pool().parallelFor(l.outer, cost, [&](std::int64_t begin, std::int64_t end) {
            normaliseColumns(kind, in + begin * l.n, out + begin * l.n, l.n, end - begin);
        });
    } else {
        const std::int64_t block = l.n * l.inner;
        ctx.pool().parallelFor(l.outer, cost, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t o = begin; o < end; ++o)
                normaliseRows(kind, in + o * block, out + o * block, l.inner, l.n);
        });
    }
}

template <NormKind kKind>
class NormaliseKernel final : public Kernel {
  public:
    explicit NormaliseKernel(const NodeInfo& node)
        : coerceTo2D_(node.opsetVersion() < 13),
          axis_(node.getInt("axis", coerceTo2D_ ? 1 : -1)),
          name_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const NormLayout layout = layoutOf(x.shape());
        dispatchTypeSet<TypeSet::Float>(x.dtype(), name_.c_str(), [&]<class T>() {
            if (x.numel() == 0) {
                outputs[0] = Value(Tensor(x.dtype(), x.shape()));
                return;
            }
            if constexpr (isReducedFloat<T>) {
                // Computed in float: exp and the sums need the range and precision.
                const Tensor wide = x.castTo(DataType::Float);
                Tensor y(DataType::Float, x.shape());
                normalise(ctx, kKind, layout, wide.data<float>(), y.data<float>());
                outputs[0] = Value(y.castTo(x.dtype()));
            } else {
                Tensor y(x.dtype(), x.shape());
                normalise(ctx, kKind, layout, x.data<T>(), y.data<T>());
                outputs[0] = Value(y);
            }
        });
    }

  private:
    NormLayout layoutOf(const Shape& shape) const {
        const auto rank = static_cast<std::int64_t>(shape.size());
        NormLayout l;
        if (rank == 0) return l;  // a scalar is a row of one
        if (coerceTo2D_) {
            // Opset < 13 allows axis == rank (everything in the outer dim).
            const std::int64_t axis = axis_ == rank ? rank : normalizeAxis(axis_, rank);
            for (std::int64_t d = 0; d < axis; ++d) l.outer *= shape[static_cast<std::size_t>(d)];
            for (std::int64_t d = axis; d < rank; ++d) l.n *= shape[static_cast<std::size_t>(d)];
        } else {
            const std::int64_t axis = normalizeAxis(axis_, rank);
            for (std::int64_t d = 0; d < axis; ++d) l.outer *= shape[static_cast<std::size_t>(d)];
            l.n = shape[static_cast<std::size_t>(axis)];
            for (std::int64_t d = axis + 1; d < rank; ++d)
                l.inner *= shape[static_cast<std::size_t>(d)];
        }
        return l;
    }

    bool coerceTo2D_;
    std::int64_t axis_;
    std::string name_;
};

struct GeluErfOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 12;
    template <class T>
    T operator()(T x) const {
        return geluErf(x);
    }
    template <class A>
    auto array(const A& x) const {
        return geluErfArray(x);
    }
};

struct GeluTanhOp : UnaryOpTraits {
    static constexpr bool kVectorized = true;
    static constexpr double kCost = 12;
    template <class T>
    T operator()(T x) const {
        return geluTanh(x);
    }
    template <class A>
    auto array(const A& x) const {
        return geluTanhArray(x);
    }
};

// Gelu (onnx opset 20, and com.onnxlens Gelu written by the optimizer's GELU pattern fusion):
// `approximate` is "none" (erf) or "tanh".
class GeluKernel final : public Kernel {
  public:
    explicit GeluKernel(const NodeInfo& node) {
        const std::string approximate = node.getString("approximate", "none");
        require(approximate == "none" || approximate == "tanh", [&] {
            return "Gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"";
        });
        tanh_ = approximate == "tanh";
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        dispatchTypeSet<TypeSet::Float>(x.dtype(), "Gelu", [&]<class T>() {
            outputs[0] = Value(tanh_ ? unaryTransform<T>(ctx, x, GeluTanhOp{})
                                     : unaryTransform<T>(ctx, x, GeluErfOp{}));
        });
    }

  private:
    bool tanh_ = false;
};

}  // namespace

void registerActivationOps(KernelRegistry& registry) {
    registry.add<UnaryKernel<ReluOp>>("Relu");
    registry.add<UnaryKernel<LeakyReluOp>>("LeakyRelu");
    registry.add<UnaryKernel<EluOp>>("Elu");
    registry.add<UnaryKernel<SeluOp>>("Selu");
    registry.add<UnaryKernel<CeluOp>>("Celu");
    registry.add<UnaryKernel<SigmoidOp>>("Sigmoid");
    registry.add<UnaryKernel<HardSigmoidOp>>("HardSigmoid");
    registry.add<UnaryKernel<HardSwishOp>>("HardSwish");
    registry.add<UnaryKernel<TanhOp>>("Tanh");
    registry.add<UnaryKernel<SoftplusOp>>("Softplus");
    registry.add<UnaryKernel<MishOp>>("Mish", 18);
    registry.add<UnaryKernel<SwishOp>>("Swish", 24);
    registry.add<UnaryKernel<SoftsignOp>>("Softsign");
    registry.add<UnaryKernel<ThresholdedReluOp>>("ThresholdedRelu");
    registry.add<UnaryKernel<ShrinkOp>>("Shrink");
    registry.add<PReluKernel>("PRelu");
    registry.add<GeluKernel>("Gelu", 20);
    registry.add<GeluKernel>("Gelu", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<NormaliseKernel<NormKind::Softmax>>("Softmax");
    registry.add<NormaliseKernel<NormKind::LogSoftmax>>("LogSoftmax");
    registry.add<NormaliseKernel<NormKind::Hardmax>>("Hardmax");
}

}  // namespace onnxlens::engine::ops
