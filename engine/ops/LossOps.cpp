// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, over [N, C] or
// [N, C, d1, ..., dk] inputs with class targets [N] or [N, d1, ..., dk].
// Mean reduction divides by the sum of the weights of the counted targets (1 each without
// weights), so ignored targets count neither in the sum nor in the divisor.
#include <cmath>
#include <limits>
#include <optional>

#include "NormalizationChannelLayout.h"
#include "OpFamilies.h"
#include "ReduceNumeric.h"

namespace onnxlens::engine::ops {
namespace {

enum class LossReduction { None, Sum, Mean };

LossReduction parseReduction(const NodeInfo& node) {
    std::string r = node.getString("reduction", "mean");
    if (r == "none") return LossReduction::None;
    if (r == "sum") return LossReduction::Sum;
    if (r == "mean") return LossReduction::Mean;
    fail("unsupported reduction '" + r + "' (expected none, sum or mean)");
}

// Reads the shared attributes and applies the weighted negative log-likelihood to log
// probabilities laid out as [N, C, D] (D = product of the extra dims).
class ClassLoss {
  public:
    explicit ClassLoss(const NodeInfo& node) : reduction_(parseReduction(node)) {
        if (node.hasAttribute("ignore_index")) ignoreIndex_ = node.getInt("ignore_index");
    }

    using Layout = ChannelLayout;  // spatial = product of the extra dims d1..dk
    static Layout checkShapes(const Tensor& input, const Tensor& target, const char* op) {
        Layout l = channelLayout(input, op);
        require(isInteger(target.dtype()),
                [&] { return std::string(op) + ": target must be an integer tensor"; });
        Shape expected{input.dim(0)};
        expected.insert(expected.end(), input.shape().begin() + 2, input.shape().end());
        require(target.shape() == expected, [&] {
            return std::string(op) + ": target shape " + shapeToString(target.shape()) +
                   " should be " + shapeToString(expected) + " for input " +
                   shapeToString(input.shape());
        });
        return l;
    }

    // logProb: [N, C, D] as doubles; returns the loss tensor of `type`.
    Tensor apply(const std::vector<double>& logProb, const Layout& l, const Tensor& target,
                 const Tensor* weight, DataType type, const char* op) const {
        std::vector<double> weights;
        if (weight) {
            require(weight->rank() == 1 && weight->dim(0) == l.c, [&] {
                return std::string(op) + ": weight must have one value per class (" +
                       std::to_string(l.c) + "), got " + shapeToString(weight->shape());
            });
            weights = elementsAsDoubles(*weight);
        }
        std::vector<std::int64_t> classes = target.toInt64Vector();
        std::vector<double> losses(classes.size());
        double weightSum = 0, lossSum = 0;
        for (std::int64_t i = 0; i < l.n; ++i) {
            for (std::int64_t j = 0; j < l.spatial; ++j) {
                auto k = static_cast<std::size_t>(i * l.spatial + j);
                std::int64_t cls = classes[k];
                if (ignoreIndex_ && cls == *ignoreIndex_) continue;
                require(cls >= 0 && cls < l.c, [&] {
                    return std::string(op) + ": target class " + std::to_string(cls) +
                           " is outside [0, " + std::to_string(l.c) + ")";
                });
                double w = weights.empty() ? 1.0 : weights[static_cast<std::size_t>(cls)];
                losses[k] = -w * logProb[static_cast<std::size_t>((i * l.c + cls) * l.spatial + j)];
                weightSum += w;
                lossSum += losses[k];
            }
        }
        if (reduction_ == LossReduction::None) {
            return doublesToTensor(losses, type, target.shape());
        }
        double result = reduction_ == LossReduction::Sum ? lossSum : lossSum / weightSum;
        return doublesToTensor({result}, type, {});
    }

  private:
    LossReduction reduction_;
    std::optional<std::int64_t> ignoreIndex_;
};

std::vector<double> floatsAsDoubles(const Tensor& t, const char* op) {
    require(isFloatingPoint(t.dtype()), [&] {
        return std::string(op) + ": input must be floating-point, got " + dataTypeName(t.dtype());
    });
    return elementsAsDoubles(t);
}

class NegativeLogLikelihoodLossKernel : public Kernel {
  public:
    explicit NegativeLogLikelihoodLossKernel(const NodeInfo& node) : loss_(node) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const char* op = "NegativeLogLikelihoodLoss";
        const Tensor& input = inputTensor(inputs, 0);
        const Tensor& target = inputTensor(inputs, 1);
        auto layout = ClassLoss::checkShapes(input, target, op);
        outputs[0] = Value(loss_.apply(floatsAsDoubles(input, op), layout, target,
                                       optionalInputTensor(inputs, 2), input.dtype(), op));
    }

  private:
    ClassLoss loss_;
};

class SoftmaxCrossEntropyLossKernel : public Kernel {
  public:
    explicit SoftmaxCrossEntropyLossKernel(const NodeInfo& node) : loss_(node) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const char* op = "SoftmaxCrossEntropyLoss";
        const Tensor& scores = inputTensor(inputs, 0);
        const Tensor& labels = inputTensor(inputs, 1);
        auto l = ClassLoss::checkShapes(scores, labels, op);
        std::vector<double> logProb = floatsAsDoubles(scores, op);
        // log_softmax over the class axis, shifted by the maximum for stability.
        for (std::int64_t i = 0; i < l.n; ++i) {
            for (std::int64_t j = 0; j < l.spatial; ++j) {
                auto at = [&](std::int64_t c) -> double& {
                    return logProb[static_cast<std::size_t>((i * l.c + c) * l.spatial + j)];
                };
                double maxValue = -std::numeric_limits<double>::infinity();
                for (std::int64_t c = 0; c < l.c; ++c) maxValue = std::max(maxValue, at(c));
                double sum = 0;
                for (std::int64_t c = 0; c < l.c; ++c) sum += std::exp(at(c) - maxValue);
                double logSum = maxValue + std::log(sum);
                for (std::int64_t c = 0; c < l.c; ++c) at(c) -= logSum;
            }
        }
        outputs[0] = Value(
            loss_.apply(logProb, l, labels, optionalInputTensor(inputs, 2), scores.dtype(), op));
        if (outputs.size() > 1)
            outputs[1] = Value(doublesToTensor(logProb, scores.dtype(), scores.shape()));
    }

  private:
    ClassLoss loss_;
};

}  // namespace

void registerLossOps(KernelRegistry& registry) {
    registry.add<NegativeLogLikelihoodLossKernel>("NegativeLogLikelihoodLoss", 12);
    registry.add<SoftmaxCrossEntropyLossKernel>("SoftmaxCrossEntropyLoss", 12);
}

}  // namespace onnxlens::engine::ops
