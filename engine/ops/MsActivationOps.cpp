// The com.microsoft activations ONNX Runtime's transformer and diffusion optimizers write: Gelu
// (erf), FastGelu (tanh approximation, optional bias), BiasGelu (bias then erf Gelu), QuickGelu
// (x * sigmoid(alpha x)), BiasAdd (X + bias + skip) and BiasSplitGelu (X + bias split in two
// halves along the last axis, left * Gelu(right)). Semantics: ONNX Runtime's
// docs/ContribOperators.md, and its kernels where that is silent.
//
// Every one runs as Eigen array expressions over rows of the last axis (the GELU forms of
// GeluOp.h), float16/bfloat16 rows converted once into a float scratch row, rows split over the
// thread pool.
#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "GeluOp.h"
#include "MsKernelSupport.h"
#include "OpFamilies.h"
#include "SubnormalFreeMath.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {
namespace {

using namespace ms;

// Elements per block when an operator without bias splits a tensor regardless of its rows.
constexpr std::int64_t kBlock = 4096;

// A bias over x's last axis: 1-D, x's type, x.shape().back() elements.
void requireLastAxisBias(const Tensor& bias, const Tensor& x, const std::string& op,
                         const char* name) {
    require(bias.dtype() == x.dtype(), [&] {
        return op + ": " + name + " must have the input's type " + dataTypeName(x.dtype()) +
               ", got " + dataTypeName(bias.dtype());
    });
    require(x.rank() >= 1,
            [&] { return op + ": a " + name + " needs an input of rank 1 or more, got a scalar"; });
    require(bias.rank() == 1 && bias.dim(0) == x.shape().back(), [&] {
        return op + ": " + name + " must have shape [" + std::to_string(x.shape().back()) +
               "] (the input's last dimension), got " + shapeToString(bias.shape());
    });
}

struct GeluErfActivation {
    static constexpr double kCost = 12;
    template <class A>
    auto operator()(const A& x) const {
        return geluErfArray(x);
    }
};

struct GeluTanhActivation {
    static constexpr double kCost = 12;
    template <class A>
    auto operator()(const A& x) const {
        return geluTanhArray(x);
    }
};

// x * sigmoid(alpha x), alpha 1.702 unless the node says otherwise.
struct QuickGeluActivation {
    static constexpr double kCost = 8;
    explicit QuickGeluActivation(const NodeInfo& node) : alpha(node.getFloat("alpha", 1.702f)) {}
    template <class A>
    auto operator()(const A& x) const {
        using S = typename A::Scalar;
        return x * (x * S(alpha)).unaryExpr(LogisticWithoutSubnormals{});
    }
    float alpha;
};

template <class Act>
Act makeActivation(const NodeInfo& node) {
    if constexpr (std::is_constructible_v<Act, const NodeInfo&>)
        return Act(node);
    else
        return Act{};
}

enum class Bias { None, Optional, Required };

// Y = act(X [+ bias]), the bias (input 1) over X's last axis.
template <class Act, Bias kBias>
class BiasActivationKernel final : public Kernel {
  public:
    explicit BiasActivationKernel(const NodeInfo& node)
        : op_(node.opType()), act_(makeActivation<Act>(node)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = requiredInput(inputs, 0, op_, "X");
        requireFloatTensor(x, op_, "X");
        const Tensor* bias = nullptr;
        if constexpr (kBias == Bias::Required) bias = &requiredInput(inputs, 1, op_, "bias");
        if constexpr (kBias == Bias::Optional) bias = optionalInputTensor(inputs, 1);
        if (bias) requireLastAxisBias(*bias, x, op_, "bias");
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const T* in = x.data<T>();
            T* out = y.data<T>();
            if (!bias) {
                ctx.pool().parallelFor(
                    x.numel(), Act::kCost, [&](std::int64_t begin, std::int64_t end) {
                        ArrayOf<C> scratch(std::is_same_v<T, C> ? 0
                                                                : std::min(kBlock, end - begin));
                        for (std::int64_t start = begin; start < end; start += kBlock) {
                            const std::int64_t n = std::min(kBlock, end - start);
                            if constexpr (std::is_same_v<T, C>) {
                                RowMap<C>(out + start, n) = act_(ConstRowMap<C>(in + start, n));
                            } else {
                                auto v = scratch.head(n);
                                v = ConstRowMap<T>(in + start, n).template cast<C>();
                                v = act_(v);
                                RowMap<T>(out + start, n) = v.template cast<T>();
                            }
                        }
                    });
                return;
            }
            const std::int64_t h = x.shape().back();
            const std::int64_t rows = h > 0 ? x.numel() / h : 0;
            const ArrayOf<C> b = ConstRowMap<T>(bias->data<T>(), h).template cast<C>();
            ctx.pool().parallelFor(
                rows, static_cast<double>(h) * (Act::kCost + 1),
                [&](std::int64_t begin, std::int64_t end) {
                    ArrayOf<C> scratch(std::is_same_v<T, C> ? 0 : h);
                    for (std::int64_t r = begin; r < end; ++r) {
                        if constexpr (std::is_same_v<T, C>) {
                            RowMap<C> v(out + r * h, h);
                            v = ConstRowMap<C>(in + r * h, h) + b;
                            v = act_(v);
                        } else {
                            scratch = ConstRowMap<T>(in + r * h, h).template cast<C>() + b;
                            scratch = act_(scratch);
                            RowMap<T>(out + r * h, h) = scratch.template cast<T>();
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    std::string op_;
    Act act_;
};

// BiasAdd: Y = X + bias + skip, X and skip [N, S, C], bias [C].
class BiasAddKernel final : public Kernel {
  public:
    explicit BiasAddKernel(const NodeInfo& node) : op_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = requiredInput(inputs, 0, op_, "X");
        const Tensor& bias = requiredInput(inputs, 1, op_, "bias");
        const Tensor& skip = requiredInput(inputs, 2, op_, "skip");
        requireFloatTensor(x, op_, "X");
        require(x.rank() == 3,
                [&] { return op_ + ": X must be 3-D [N, S, C], got " + shapeToString(x.shape()); });
        requireLastAxisBias(bias, x, op_, "bias");
        require(skip.dtype() == x.dtype() && skip.shape() == x.shape(), [&] {
            return op_ + ": skip must have X's type and shape (" + dataTypeName(x.dtype()) + " " +
                   shapeToString(x.shape()) + "), got " + dataTypeName(skip.dtype()) + " " +
                   shapeToString(skip.shape());
        });
        const std::int64_t c = x.dim(2);
        const std::int64_t rows = x.dim(0) * x.dim(1);
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const T* in = x.data<T>();
            const T* sk = skip.data<T>();
            T* out = y.data<T>();
            const ArrayOf<C> b = ConstRowMap<T>(bias.data<T>(), c).template cast<C>();
            ctx.pool().parallelFor(
                rows, static_cast<double>(c) * 2, [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t r = begin; r < end; ++r) {
                        const std::int64_t at = r * c;
                        if constexpr (std::is_same_v<T, C>) {
                            RowMap<C>(out + at, c) =
                                ConstRowMap<C>(in + at, c) + ConstRowMap<C>(sk + at, c) + b;
                        } else {
                            RowMap<T>(out + at, c) =
                                (ConstRowMap<T>(in + at, c).template cast<C>() +
                                 ConstRowMap<T>(sk + at, c).template cast<C>() + b)
                                    .template cast<T>();
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    std::string op_;
};

// BiasSplitGelu: X [N, S, D] + bias [D] split along D into left and right halves;
// Y [N, S, D / 2] = left * Gelu(right) (erf form).
class BiasSplitGeluKernel final : public Kernel {
  public:
    explicit BiasSplitGeluKernel(const NodeInfo& node) : op_(node.opType()) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = requiredInput(inputs, 0, op_, "X");
        const Tensor& bias = requiredInput(inputs, 1, op_, "bias");
        requireFloatTensor(x, op_, "X");
        require(x.rank() == 3,
                [&] { return op_ + ": X must be 3-D [N, S, D], got " + shapeToString(x.shape()); });
        requireLastAxisBias(bias, x, op_, "bias");
        const std::int64_t d = x.dim(2);
        require(d % 2 == 0, [&] {
            return op_ + ": X's last dimension " + std::to_string(d) +
                   " does not split into two halves";
        });
        const std::int64_t half = d / 2;
        const std::int64_t rows = x.dim(0) * x.dim(1);
        Tensor y(x.dtype(), {x.dim(0), x.dim(1), half});
        dispatchFloat(x.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const T* in = x.data<T>();
            T* out = y.data<T>();
            const ArrayOf<C> b = ConstRowMap<T>(bias.data<T>(), d).template cast<C>();
            ctx.pool().parallelFor(
                rows, static_cast<double>(d) * 8, [&](std::int64_t begin, std::int64_t end) {
                    ArrayOf<C> row(d);
                    for (std::int64_t r = begin; r < end; ++r) {
                        row = ConstRowMap<T>(in + r * d, d).template cast<C>() + b;
                        auto right = row.tail(half);
                        right = geluErfArray(right);
                        RowMap<T>(out + r * half, half) =
                            (row.head(half) * right).template cast<T>();
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    std::string op_;
};

}  // namespace

void registerMsActivationOps(KernelRegistry& registry) {
    const std::string domain = kMicrosoftDomain;
    registry.add<BiasActivationKernel<GeluErfActivation, Bias::None>>("Gelu", 1, kLatestOpset,
                                                                      domain);
    registry.add<BiasActivationKernel<GeluTanhActivation, Bias::Optional>>("FastGelu", 1,
                                                                           kLatestOpset, domain);
    registry.add<BiasActivationKernel<GeluErfActivation, Bias::Required>>("BiasGelu", 1,
                                                                          kLatestOpset, domain);
    registry.add<BiasActivationKernel<QuickGeluActivation, Bias::None>>("QuickGelu", 1,
                                                                        kLatestOpset, domain);
    // The optimizer's x * Sigmoid(x) (pass fuse-silu), alpha 1.
    registry.add<BiasActivationKernel<QuickGeluActivation, Bias::None>>(
        "QuickGelu", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<BiasAddKernel>("BiasAdd", 1, kLatestOpset, domain);
    registry.add<BiasSplitGeluKernel>("BiasSplitGelu", 1, kLatestOpset, domain);
}

}  // namespace onnxlens::engine::ops
