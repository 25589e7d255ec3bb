// ai.onnx.ml linear models: LinearClassifier and LinearRegressor (scores = X W^T + b, then a
// post transform). The products run through Eigen, row blocks in parallel on the session's pool.
#include <Eigen/Core>

#include "MlCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// scores[N, T] = X[N, F] W[T, F]^T + b: the shared core of both linear models.
Tensor linearScores(KernelContext& ctx, const Tensor& input, const RowMajor& weights,
                    const std::vector<float>& intercepts, const std::string& op) {
    Tensor x = ml::featuresAsFloatOrDouble(input).castTo(DataType::Float);
    const auto shape = ml::rowShapeOf(x);
    const auto targets = weights.rows();
    if (shape.features != weights.cols())
        throw EngineError(op + ": input has " + std::to_string(shape.features) +
                          " features, the coefficients " + std::to_string(weights.cols()));
    Tensor scores(DataType::Float, {shape.rows, targets});
    const float* xp = x.data<float>();
    float* sp = scores.data<float>();
    ctx.pool().parallelFor(
        shape.rows, 2.0 * static_cast<double>(weights.size()), [&](std::int64_t b, std::int64_t e) {
            Eigen::Map<const RowMajor> xs(xp + b * shape.features, e - b, shape.features);
            Eigen::Map<RowMajor> out(sp + b * targets, e - b, targets);
            out.noalias() = xs * weights.transpose();
            for (std::int64_t r = 0; r < e - b; ++r)
                for (Eigen::Index t = 0; t < targets; ++t)
                    out(r, t) +=
                        intercepts.empty() ? 0.0f : intercepts[static_cast<std::size_t>(t)];
        });
    return scores;
}

RowMajor coefficientMatrix(const NodeInfo& node, std::int64_t targets) {
    auto coefficients = node.getFloats("coefficients");
    if (targets <= 0 || coefficients.empty() ||
        coefficients.size() % static_cast<std::size_t>(targets) != 0)
        throw EngineError(node.opType() + ": " + std::to_string(coefficients.size()) +
                          " coefficients do not split into " + std::to_string(targets) + " rows");
    const auto features =
        static_cast<Eigen::Index>(coefficients.size() / static_cast<std::size_t>(targets));
    return Eigen::Map<const RowMajor>(coefficients.data(), targets, features);
}

class LinearClassifierKernel : public Kernel {
  public:
    explicit LinearClassifierKernel(const NodeInfo& node)
        : labels_(ml::ClassLabels::read(node, "classlabels_ints")),
          transform_(ml::parsePostTransform(node)),
          intercepts_(node.getFloats("intercepts")) {
        if (labels_.size() == 0) throw EngineError("LinearClassifier: no class labels");
        // One coefficient row for two labels is the binary form: the row scores the second class.
        const auto coefficientCount = node.getFloats("coefficients").size();
        rows_ = !intercepts_.empty() ? static_cast<std::int64_t>(intercepts_.size())
                : coefficientCount % labels_.size() == 0 ? static_cast<std::int64_t>(labels_.size())
                                                         : 1;
        if (rows_ != static_cast<std::int64_t>(labels_.size()) &&
            !(rows_ == 1 && labels_.size() == 2))
            throw EngineError("LinearClassifier: " + std::to_string(rows_) +
                              " coefficient rows for " + std::to_string(labels_.size()) +
                              " class labels");
        weights_ = coefficientMatrix(node, rows_);
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        Tensor raw =
            linearScores(ctx, inputTensor(inputs, 0), weights_, intercepts_, "LinearClassifier");
        const std::int64_t n = raw.dim(0);
        Tensor labels = labels_.allocate(n);
        if (rows_ == 1) {
            // Binary: the second class scores s, the first -s (probabilities 1 - p and p).
            Tensor scores(DataType::Float, {n, 2});
            const float* r = raw.data<float>();
            float* z = scores.data<float>();
            for (std::int64_t i = 0; i < n; ++i) {
                labels_.write(labels, i, r[i] > 0 ? 1 : 0);
                if (transform_ == ml::PostTransform::Logistic) {
                    z[2 * i + 1] = static_cast<float>(ml::logistic(r[i]));
                    z[2 * i] = static_cast<float>(ml::logistic(-r[i]));
                } else {
                    z[2 * i] = -r[i];
                    z[2 * i + 1] = r[i];
                    ml::applyPostTransform(transform_, z + 2 * i, 2);
                }
            }
            outputs[0] = std::move(labels);
            outputs[1] = std::move(scores);
            return;
        }
        const auto classes = raw.dim(1);
        float* z = raw.data<float>();
        for (std::int64_t i = 0; i < n; ++i) {
            float* row = z + i * classes;
            labels_.write(labels, i, std::max_element(row, row + classes) - row);
            ml::applyPostTransform(transform_, row, static_cast<std::size_t>(classes));
        }
        outputs[0] = std::move(labels);
        outputs[1] = std::move(raw);
    }

  private:
    ml::ClassLabels labels_;
    ml::PostTransform transform_;
    std::vector<float> intercepts_;
    std::int64_t rows_ = 0;
    RowMajor weights_;
};

class LinearRegressorKernel : public Kernel {
  public:
    explicit LinearRegressorKernel(const NodeInfo& node)
        : transform_(ml::parsePostTransform(node)), intercepts_(node.getFloats("intercepts")) {
        const auto targets = node.getInt("targets", 1);
        weights_ = coefficientMatrix(node, targets);
        if (!intercepts_.empty() && intercepts_.size() != static_cast<std::size_t>(targets))
            throw EngineError("LinearRegressor: " + std::to_string(intercepts_.size()) +
                              " intercepts for " + std::to_string(targets) + " targets");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        Tensor y =
            linearScores(ctx, inputTensor(inputs, 0), weights_, intercepts_, "LinearRegressor");
        if (transform_ != ml::PostTransform::None) {
            const auto t = y.dim(1);
            for (std::int64_t i = 0; i < y.dim(0); ++i)
                ml::applyPostTransform(transform_, y.data<float>() + i * t,
                                       static_cast<std::size_t>(t));
        }
        outputs[0] = std::move(y);
    }

  private:
    ml::PostTransform transform_;
    std::vector<float> intercepts_;
    RowMajor weights_;
};

}  // namespace

void registerMlLinearOps(KernelRegistry& registry) {
    registry.add<LinearClassifierKernel>("LinearClassifier", 1, kLatestOpset, "ai.onnx.ml");
    registry.add<LinearRegressorKernel>("LinearRegressor", 1, kLatestOpset, "ai.onnx.ml");
}

}  // namespace onnxlens::engine::ops
