// Optimizers of the ai.onnx.preview.training domain: Adagrad, Momentum (standard and Nesterov)
// and Adam. Each takes a learning rate R, an update count T, then n groups of tensors (weights,
// gradients, accumulators...) and returns the updated weights and accumulators, group by group.
#include <array>
#include <cmath>
#include <functional>

#include "OpFamilies.h"
#include "ReduceNumeric.h"

namespace onnxlens::engine::ops {
namespace {

const std::string kTrainingDomain = "ai.onnx.preview.training";

// The shared skeleton: validates the input groups and applies `update` element by element.
// `update(inputs, outputs)` receives the i-th element of each per-tensor input group
// (X, G, then the accumulators) and writes the i-th element of each output group.
template <std::size_t Inputs, std::size_t Outputs>
class OptimizerKernel : public Kernel {
  public:
    OptimizerKernel(const NodeInfo& node, const char* op) : op_(op) {
        require(
            node.inputCount() >= 2 && (node.inputCount() - 2) % static_cast<int>(Inputs) == 0, [&] {
                return std::string(op) + ": expects R, T and groups of " + std::to_string(Inputs) +
                       " tensors, got " + std::to_string(node.inputCount()) + " inputs";
            });
        tensors_ = static_cast<std::size_t>(node.inputCount() - 2) / Inputs;
        require(static_cast<std::size_t>(node.outputCount()) == tensors_ * Outputs, [&] {
            return std::string(op) + ": expects " + std::to_string(tensors_ * Outputs) +
                   " outputs for " + std::to_string(tensors_) + " optimized tensors";
        });
    }

  protected:
    using Update =
        std::function<void(const std::array<double, Inputs>&, std::array<double, Outputs>&)>;

    // Reads R and T; T as a double so rates like beta^T are direct.
    std::pair<double, double> rateAndCount(const std::vector<const Value*>& inputs) const {
        const Tensor& r = inputTensor(inputs, 0);
        const Tensor& t = inputTensor(inputs, 1);
        require(r.numel() == 1 && t.numel() == 1,
                [&] { return std::string(op_) + ": R and T must be scalars"; });
        return {r.valueAsDouble(0), t.valueAsDouble(0)};
    }

    void apply(const std::vector<const Value*>& inputs, std::vector<Value>& outputs,
               const Update& update) const {
        for (std::size_t g = 0; g < tensors_; ++g) {
            std::array<std::vector<double>, Inputs> in;
            const Tensor& x = inputTensor(inputs, 2 + g);
            require(isFloatingPoint(x.dtype()), [&] {
                return std::string(op_) + ": optimized tensors must be floating-point";
            });
            for (std::size_t k = 0; k < Inputs; ++k) {
                const Tensor& t = inputTensor(inputs, 2 + k * tensors_ + g);
                require(t.shape() == x.shape(), [&] {
                    return std::string(op_) + ": tensor " + std::to_string(2 + k * tensors_ + g) +
                           " has shape " + shapeToString(t.shape()) + ", expected " +
                           shapeToString(x.shape());
                });
                in[k] = elementsAsDoubles(t);
            }
            std::array<std::vector<double>, Outputs> out;
            for (auto& o : out) o.resize(static_cast<std::size_t>(x.numel()));
            std::array<double, Inputs> element{};
            std::array<double, Outputs> result{};
            for (std::size_t i = 0; i < static_cast<std::size_t>(x.numel()); ++i) {
                for (std::size_t k = 0; k < Inputs; ++k) element[k] = in[k][i];
                update(element, result);
                for (std::size_t k = 0; k < Outputs; ++k) out[k][i] = result[k];
            }
            for (std::size_t k = 0; k < Outputs; ++k) {
                // Accumulators keep their own type; the weight output keeps X's.
                const Tensor& like = inputTensor(inputs, 2 + (k == 0 ? 0 : k + 1) * tensors_ + g);
                outputs[k * tensors_ + g] = Value(doublesToTensor(out[k], like.dtype(), x.shape()));
            }
        }
    }

  private:
    const char* op_;
    std::size_t tensors_ = 0;
};

// Inputs per tensor: X, G, H. Outputs: X_new, H_new.
class AdagradKernel : public OptimizerKernel<3, 2> {
  public:
    explicit AdagradKernel(const NodeInfo& node)
        : OptimizerKernel(node, "Adagrad"),
          decay_(node.getFloat("decay_factor", 0.0f)),
          epsilon_(node.getFloat("epsilon", 1e-6f)),
          norm_(node.getFloat("norm_coefficient", 0.0f)) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const auto [rateIn, countIn] = rateAndCount(inputs);
        const double r = rateIn, t = countIn;  // plain variables: clang 14 cannot capture bindings
        double rate = r / (1 + t * decay_);
        apply(inputs, outputs, [&](const std::array<double, 3>& in, std::array<double, 2>& out) {
            double g = norm_ * in[0] + in[1];
            double h = in[2] + g * g;
            out[0] = in[0] - rate * g / (std::sqrt(h) + epsilon_);
            out[1] = h;
        });
    }

  private:
    double decay_, epsilon_, norm_;
};

// Inputs per tensor: X, G, V. Outputs: X_new, V_new.
class MomentumKernel : public OptimizerKernel<3, 2> {
  public:
    explicit MomentumKernel(const NodeInfo& node)
        : OptimizerKernel(node, "Momentum"),
          alpha_(node.getFloat("alpha")),
          beta_(node.getFloat("beta")),
          norm_(node.getFloat("norm_coefficient")) {
        std::string mode = node.getString("mode");
        require(mode == "standard" || mode == "nesterov",
                [&] { return "Momentum: mode must be standard or nesterov, got " + mode; });
        nesterov_ = mode == "nesterov";
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const auto [rateIn, countIn] = rateAndCount(inputs);
        const double r = rateIn, t = countIn;  // plain variables: clang 14 cannot capture bindings
        // The gradient's coefficient is 1 on the first update.
        double beta = t > 0 ? beta_ : 1.0;
        apply(inputs, outputs, [&](const std::array<double, 3>& in, std::array<double, 2>& out) {
            double g = norm_ * in[0] + in[1];
            double v = alpha_ * in[2] + beta * g;
            out[0] = in[0] - r * (nesterov_ ? g + alpha_ * v : v);
            out[1] = v;
        });
    }

  private:
    double alpha_, beta_, norm_;
    bool nesterov_ = false;
};

// Inputs per tensor: X, G, V, H. Outputs: X_new, V_new, H_new.
class AdamKernel : public OptimizerKernel<4, 3> {
  public:
    explicit AdamKernel(const NodeInfo& node)
        : OptimizerKernel(node, "Adam"),
          alpha_(node.getFloat("alpha", 0.9f)),
          beta_(node.getFloat("beta", 0.999f)),
          epsilon_(node.getFloat("epsilon", 1e-6f)),
          norm_(node.getFloat("norm_coefficient", 0.0f)),
          normPost_(node.getFloat("norm_coefficient_post", 0.0f)) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const auto [rateIn, countIn] = rateAndCount(inputs);
        const double r = rateIn, t = countIn;  // plain variables: clang 14 cannot capture bindings
        // Bias correction of both moments, from the second update on.
        double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta_, t)) / (1 - std::pow(alpha_, t)) : r;
        apply(inputs, outputs, [&](const std::array<double, 4>& in, std::array<double, 3>& out) {
            double g = norm_ * in[0] + in[1];
            double v = alpha_ * in[2] + (1 - alpha_) * g;
            double h = beta_ * in[3] + (1 - beta_) * g * g;
            double x = in[0] - rate * v / (std::sqrt(h) + epsilon_);
            out[0] = (1 - normPost_) * x;
            out[1] = v;
            out[2] = h;
        });
    }

  private:
    double alpha_, beta_, epsilon_, norm_, normPost_;
};

}  // namespace

void registerTrainingOps(KernelRegistry& registry) {
    registry.add<AdagradKernel>("Adagrad", 1, kLatestOpset, kTrainingDomain);
    registry.add<MomentumKernel>("Momentum", 1, kLatestOpset, kTrainingDomain);
    registry.add<AdamKernel>("Adam", 1, kLatestOpset, kTrainingDomain);
}

}  // namespace onnxlens::engine::ops
