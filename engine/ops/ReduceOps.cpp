// Reduce*: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
//
// The axes are an attribute up to opset 12 (ReduceSum) / 17 (the others) and an optional
// input afterwards; a kernel takes them from whichever the node carries. Empty axes reduce
// everything unless noop_with_empty_axes is set. An empty reduction yields the identity element
// (0 for sums, 1 for products, -inf/+inf for max/min, NaN for the mean of nothing).
#include <cmath>
#include <limits>

#include "OpFamilies.h"
#include "ReduceAxesPlan.h"
#include "ReduceNumeric.h"

namespace onnxlens::engine::ops {
namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

template <ReduceKind K, class T>
struct Reducer {
    using Acc = AccumulatorOf<T>;
    static constexpr bool kIsExtremum = K == ReduceKind::Max || K == ReduceKind::Min;
    // Max/Min keep integers exact in their own accumulator; everything else in double for
    // integers too, except plain sums and products of integers, which stay integral.
    using Work = std::conditional_t<kIsExtremum || K == ReduceKind::Sum || K == ReduceKind::Prod ||
                                        K == ReduceKind::SumSquare || K == ReduceKind::L1,
                                    Acc, double>;

    static Work identity() {
        if constexpr (K == ReduceKind::Prod) return Work(1);
        if constexpr (K == ReduceKind::Max) {
            if constexpr (std::numeric_limits<Work>::has_infinity)
                return -std::numeric_limits<Work>::infinity();
            else
                return static_cast<Work>(std::numeric_limits<T>::lowest());
        }
        if constexpr (K == ReduceKind::Min) {
            if constexpr (std::numeric_limits<Work>::has_infinity)
                return std::numeric_limits<Work>::infinity();
            else
                return static_cast<Work>(std::numeric_limits<T>::max());
        }
        return Work(0);
    }

    static void combine(Work& acc, Work v) {
        if constexpr (K == ReduceKind::Sum || K == ReduceKind::Mean || K == ReduceKind::LogSum) {
            acc += v;
        } else if constexpr (K == ReduceKind::Prod) {
            acc *= v;
        } else if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
            if constexpr (std::is_floating_point_v<Work>) {
                if (std::isnan(v) || std::isnan(acc)) {
                    acc = std::numeric_limits<Work>::quiet_NaN();
                    return;
                }
            }
            if (K == ReduceKind::Max ? v > acc : v < acc) acc = v;
        } else if constexpr (K == ReduceKind::L1) {
            if constexpr (std::is_unsigned_v<Work>)
                acc += v;
            else
                acc += v < Work(0) ? -v : v;
        } else {  // L2, SumSquare
            acc += v * v;
        }
    }

    static T finish(Work acc, std::int64_t count) {
        if constexpr (K == ReduceKind::Mean) return fromDouble<T>(acc / static_cast<double>(count));
        if constexpr (K == ReduceKind::L2) return fromDouble<T>(std::sqrt(acc));
        if constexpr (K == ReduceKind::LogSum) return fromDouble<T>(std::log(acc));
        if constexpr (std::is_same_v<Work, double>) return fromDouble<T>(acc);
        return static_cast<T>(acc);
    }

    static T reduceOne(const T* base, const ReduceAxesPlan& plan) {
        if constexpr (K == ReduceKind::LogSumExp) {
            // Shift by the maximum so exp never overflows.
            double maxValue = -std::numeric_limits<double>::infinity();
            plan.forEachReduced([&](std::int64_t off) {
                maxValue = std::max(maxValue, toAccumulator<double>(base[off]));
            });
            if (std::isinf(maxValue)) return fromDouble<T>(maxValue);
            double sum = 0;
            plan.forEachReduced([&](std::int64_t off) {
                sum += std::exp(toAccumulator<double>(base[off]) - maxValue);
            });
            return fromDouble<T>(maxValue + std::log(sum));
        } else {
            Work acc = identity();
            plan.forEachReduced(
                [&](std::int64_t off) { combine(acc, toAccumulator<Work>(base[off])); });
            return finish(acc, plan.reducedCount());
        }
    }
};

template <ReduceKind K>
class ReduceKernel : public Kernel {
  public:
    explicit ReduceKernel(const NodeInfo& node)
        : keepDims_(node.getInt("keepdims", 1) != 0),
          noopWithEmptyAxes_(node.getInt("noop_with_empty_axes", 0) != 0),
          axesFromAttribute_(node.hasAttribute("axes")),
          axes_(node.getInts("axes")) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        std::vector<std::int64_t> axes = axes_;
        if (!axesFromAttribute_) {
            if (const Tensor* axesInput = optionalInputTensor(inputs, 1)) {
                require(axesInput->rank() <= 1, [&] {
                    return "axes must be a 1-D tensor, got shape " +
                           shapeToString(axesInput->shape());
                });
                axes = axesInput->toInt64Vector();
            }
        }
        if (axes.empty() && noopWithEmptyAxes_ && !axesFromAttribute_) {
            outputs[0] = Value(x);
            return;
        }
        std::vector<bool> mask = axes.empty() ? std::vector<bool>(x.shape().size(), true)
                                              : reducedAxisMask(axes, x.rank());
        if (x.dtype() == DataType::Bool && (K == ReduceKind::Max || K == ReduceKind::Min)) {
            // ReduceMax/ReduceMin-20 take bool (any / all): reduced as 0/1 bytes.
            Value bytes(x.castTo(DataType::UInt8));
            std::vector<const Value*> byteInputs = inputs;
            byteInputs[0] = &bytes;
            run(ctx, byteInputs, outputs);
            outputs[0] = Value(outputs[0].tensor().castTo(DataType::Bool));
            return;
        }
        ReduceAxesPlan plan(x.shape(), mask);
        Tensor y(x.dtype(), keepDims_ ? plan.keepDimsShape() : plan.droppedDimsShape());
        dispatchNumeric(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            double cost = static_cast<double>(std::max<std::int64_t>(plan.reducedCount(), 1));
            ctx.pool().parallelFor(plan.outputCount(), cost, [&](std::int64_t b, std::int64_t e) {
                plan.forEachOutput(b, e, [&](std::int64_t o, std::int64_t base) {
                    out[o] = Reducer<K, T>::reduceOne(in + base, plan);
                });
            });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    bool keepDims_;
    bool noopWithEmptyAxes_;
    bool axesFromAttribute_;
    std::vector<std::int64_t> axes_;
};

template <ReduceKind K>
void addReduce(KernelRegistry& registry, const char* opType) {
    registry.add<ReduceKernel<K>>(opType, 1);
}

}  // namespace

void registerReduceOps(KernelRegistry& registry) {
    addReduce<ReduceKind::Sum>(registry, "ReduceSum");
    addReduce<ReduceKind::Mean>(registry, "ReduceMean");
    addReduce<ReduceKind::Max>(registry, "ReduceMax");
    addReduce<ReduceKind::Min>(registry, "ReduceMin");
    addReduce<ReduceKind::Prod>(registry, "ReduceProd");
    addReduce<ReduceKind::L1>(registry, "ReduceL1");
    addReduce<ReduceKind::L2>(registry, "ReduceL2");
    addReduce<ReduceKind::LogSum>(registry, "ReduceLogSum");
    addReduce<ReduceKind::LogSumExp>(registry, "ReduceLogSumExp");
    addReduce<ReduceKind::SumSquare>(registry, "ReduceSumSquare");
}

}  // namespace onnxlens::engine::ops
