// ai.onnx.ml support vector machines: SVMClassifier (one-vs-one votes as libsvm casts them,
// Platt-scaled pairwise probabilities coupled into class probabilities when prob_a/prob_b are
// given, or a linear one-vs-rest model when vectors_per_class is empty) and SVMRegressor
// (kernel expansion, linear, or one-class). Kernels are evaluated in double.
#include <cmath>

#include "MlCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

enum class SvmKernel { Linear, Poly, Rbf, Sigmoid };

struct KernelFunction {
    SvmKernel type = SvmKernel::Linear;
    double gamma = 0, coef0 = 0, degree = 0;

    explicit KernelFunction(const NodeInfo& node) {
        const std::string name = node.getString("kernel_type", "LINEAR");
        if (name == "LINEAR")
            type = SvmKernel::Linear;
        else if (name == "POLY")
            type = SvmKernel::Poly;
        else if (name == "RBF")
            type = SvmKernel::Rbf;
        else if (name == "SIGMOID")
            type = SvmKernel::Sigmoid;
        else
            throw EngineError(node.opType() + ": unknown kernel_type '" + name + "'");
        auto params = node.getFloats("kernel_params");
        if (params.size() > 0) gamma = params[0];
        if (params.size() > 1) coef0 = params[1];
        if (params.size() > 2) degree = params[2];
    }

    double operator()(const double* x, const float* sv, std::int64_t features) const {
        double dot = 0;
        if (type == SvmKernel::Rbf) {
            for (std::int64_t f = 0; f < features; ++f) {
                const double d = x[f] - static_cast<double>(sv[f]);
                dot += d * d;
            }
            return std::exp(-gamma * dot);
        }
        for (std::int64_t f = 0; f < features; ++f) dot += x[f] * static_cast<double>(sv[f]);
        switch (type) {
            case SvmKernel::Linear:
                return dot;
            case SvmKernel::Poly:
                return std::pow(gamma * dot + coef0, degree);
            case SvmKernel::Sigmoid:
                return std::tanh(gamma * dot + coef0);
            case SvmKernel::Rbf:
                break;
        }
        return dot;
    }
};

// The rows of a float/double/int input as doubles, one row at a time.
std::vector<double> rowsAsDouble(const Tensor& x) {
    Tensor d = x.dtype() == DataType::Double ? x : x.castTo(DataType::Double);
    const double* p = d.data<double>();
    return {p, p + d.numel()};
}

// Couples pairwise probabilities r[i][j] (P(class i | i or j)) into class probabilities: the
// fixed-point iteration of Wu, Lin and Weng (2004), method 2, as libsvm runs it.
void coupleProbabilities(std::int64_t k, const std::vector<double>& r, std::vector<double>& p) {
    auto R = [&](std::int64_t i, std::int64_t j) { return r[static_cast<std::size_t>(i * k + j)]; };
    std::vector<double> Q(static_cast<std::size_t>(k * k), 0.0), Qp(static_cast<std::size_t>(k));
    auto q = [&](std::int64_t i, std::int64_t j) -> double& {
        return Q[static_cast<std::size_t>(i * k + j)];
    };
    p.assign(static_cast<std::size_t>(k), 1.0 / static_cast<double>(k));
    for (std::int64_t t = 0; t < k; ++t) {
        for (std::int64_t j = 0; j < t; ++j) {
            q(t, t) += R(j, t) * R(j, t);
            q(t, j) = q(j, t);
        }
        for (std::int64_t j = t + 1; j < k; ++j) {
            q(t, t) += R(j, t) * R(j, t);
            q(t, j) = -R(j, t) * R(t, j);
        }
    }
    const double eps = 0.005 / static_cast<double>(k);
    const std::int64_t maxIterations = std::max<std::int64_t>(100, k);
    for (std::int64_t iteration = 0; iteration < maxIterations; ++iteration) {
        double pQp = 0;
        for (std::int64_t t = 0; t < k; ++t) {
            Qp[static_cast<std::size_t>(t)] = 0;
            for (std::int64_t j = 0; j < k; ++j)
                Qp[static_cast<std::size_t>(t)] += q(t, j) * p[static_cast<std::size_t>(j)];
            pQp += p[static_cast<std::size_t>(t)] * Qp[static_cast<std::size_t>(t)];
        }
        double maxError = 0;
        for (std::int64_t t = 0; t < k; ++t)
            maxError = std::max(maxError, std::fabs(Qp[static_cast<std::size_t>(t)] - pQp));
        if (maxError < eps) break;
        for (std::int64_t t = 0; t < k; ++t) {
            const auto ts = static_cast<std::size_t>(t);
            const double diff = (-Qp[ts] + pQp) / q(t, t);
            p[ts] += diff;
            pQp = (pQp + diff * (diff * q(t, t) + 2 * Qp[ts])) / (1 + diff) / (1 + diff);
            for (std::int64_t j = 0; j < k; ++j) {
                Qp[static_cast<std::size_t>(j)] =
                    (Qp[static_cast<std::size_t>(j)] + diff * q(t, j)) / (1 + diff);
                p[static_cast<std::size_t>(j)] /= (1 + diff);
            }
        }
    }
}

// Platt's sigmoid 1 / (1 + exp(dec * A + B)), computed without overflow.
double plattProbability(double decision, double a, double b) {
    const double f = decision * a + b;
    return f >= 0 ? std::exp(-f) / (1.0 + std::exp(-f)) : 1.0 / (1.0 + std::exp(f));
}

class SvmClassifierKernel : public Kernel {
  public:
    explicit SvmClassifierKernel(const NodeInfo& node)
        : kernel_(node),
          labels_(ml::ClassLabels::read(node, "classlabels_ints")),
          transform_(ml::parsePostTransform(node)),
          vectorsPerClass_(node.getInts("vectors_per_class")),
          supportVectors_(node.getFloats("support_vectors")),
          coefficients_(node.getFloats("coefficients")),
          rho_(node.getFloats("rho")),
          probA_(node.getFloats("prob_a")),
          probB_(node.getFloats("prob_b")) {
        classes_ = static_cast<std::int64_t>(labels_.size());
        if (classes_ == 0) throw EngineError("SVMClassifier: no class labels");
        if (vectorsPerClass_.empty()) {
            // Linear one-vs-rest: a weight row and a rho per class (one of each for two labels).
            linearRows_ = static_cast<std::int64_t>(rho_.size());
            if (linearRows_ == 0 ||
                coefficients_.size() % static_cast<std::size_t>(linearRows_) != 0)
                throw EngineError("SVMClassifier: coefficients do not split into one row per rho");
            features_ = static_cast<std::int64_t>(coefficients_.size()) / linearRows_;
            return;
        }
        if (static_cast<std::int64_t>(vectorsPerClass_.size()) != classes_)
            throw EngineError("SVMClassifier: vectors_per_class has " +
                              std::to_string(vectorsPerClass_.size()) + " entries for " +
                              std::to_string(classes_) + " classes");
        std::int64_t total = 0;
        for (auto v : vectorsPerClass_) {
            if (v < 0) throw EngineError("SVMClassifier: negative vectors_per_class");
            starts_.push_back(total);
            total += v;
        }
        if (total == 0 || supportVectors_.size() % static_cast<std::size_t>(total) != 0)
            throw EngineError("SVMClassifier: support_vectors do not split into " +
                              std::to_string(total) + " vectors");
        vectorCount_ = total;
        features_ = static_cast<std::int64_t>(supportVectors_.size()) / total;
        if (coefficients_.size() != static_cast<std::size_t>((classes_ - 1) * total))
            throw EngineError("SVMClassifier: expected " + std::to_string((classes_ - 1) * total) +
                              " coefficients, got " + std::to_string(coefficients_.size()));
        const auto pairs = classes_ * (classes_ - 1) / 2;
        if (static_cast<std::int64_t>(rho_.size()) != pairs)
            throw EngineError("SVMClassifier: expected " + std::to_string(pairs) + " rho values");
        probabilities_ = !probA_.empty();
        if (probabilities_ &&
            (static_cast<std::int64_t>(probA_.size()) != pairs || probB_.size() != probA_.size()))
            throw EngineError("SVMClassifier: prob_a and prob_b need one value per class pair");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const auto shape = ml::rowShapeOf(input);
        if (shape.features != features_)
            throw EngineError("SVMClassifier: input has " + std::to_string(shape.features) +
                              " features, the model " + std::to_string(features_));
        const auto x = rowsAsDouble(input);
        Tensor labels = labels_.allocate(shape.rows);
        if (vectorsPerClass_.empty()) return runLinear(x, shape, labels, outputs);
        const auto pairs = classes_ * (classes_ - 1) / 2;
        // Scores: class probabilities, or the pairwise decision values (two columns for two
        // classes).
        const std::int64_t columns = probabilities_ ? classes_ : (classes_ == 2 ? 2 : pairs);
        Tensor scores(DataType::Float, {shape.rows, columns});
        ctx.pool().parallelFor(
            shape.rows, 4.0 * static_cast<double>(vectorCount_ * features_),
            [&](std::int64_t b, std::int64_t e) {
                std::vector<double> k(static_cast<std::size_t>(vectorCount_)),
                    decisions(static_cast<std::size_t>(pairs)),
                    pairwise(static_cast<std::size_t>(classes_ * classes_)), probability;
                std::vector<std::int64_t> votes(static_cast<std::size_t>(classes_));
                for (std::int64_t r = b; r < e; ++r) {
                    const double* row = x.data() + r * features_;
                    for (std::int64_t v = 0; v < vectorCount_; ++v)
                        k[static_cast<std::size_t>(v)] =
                            kernel_(row, supportVectors_.data() + v * features_, features_);
                    std::fill(votes.begin(), votes.end(), 0);
                    std::int64_t pair = 0;
                    for (std::int64_t i = 0; i < classes_; ++i) {
                        for (std::int64_t j = i + 1; j < classes_; ++j, ++pair) {
                            // Coefficients of class i's vectors against j sit in row j - 1, class
                            // j's against i in row i.
                            double sum = rho_[static_cast<std::size_t>(pair)];
                            const auto si = starts_[static_cast<std::size_t>(i)],
                                       sj = starts_[static_cast<std::size_t>(j)];
                            for (std::int64_t v = 0;
                                 v < vectorsPerClass_[static_cast<std::size_t>(i)]; ++v)
                                sum += coefficients_[static_cast<std::size_t>(
                                           (j - 1) * vectorCount_ + si + v)] *
                                       k[static_cast<std::size_t>(si + v)];
                            for (std::int64_t v = 0;
                                 v < vectorsPerClass_[static_cast<std::size_t>(j)]; ++v)
                                sum += coefficients_[static_cast<std::size_t>(i * vectorCount_ +
                                                                              sj + v)] *
                                       k[static_cast<std::size_t>(sj + v)];
                            decisions[static_cast<std::size_t>(pair)] = sum;
                            ++votes[static_cast<std::size_t>(sum > 0 ? i : j)];
                        }
                    }
                    float* out = scores.data<float>() + r * columns;
                    std::int64_t winner =
                        std::max_element(votes.begin(), votes.end()) - votes.begin();
                    if (probabilities_) {
                        pair = 0;
                        for (std::int64_t i = 0; i < classes_; ++i)
                            for (std::int64_t j = i + 1; j < classes_; ++j, ++pair) {
                                const double p = std::clamp(
                                    plattProbability(decisions[static_cast<std::size_t>(pair)],
                                                     probA_[static_cast<std::size_t>(pair)],
                                                     probB_[static_cast<std::size_t>(pair)]),
                                    1e-7, 1 - 1e-7);
                                pairwise[static_cast<std::size_t>(i * classes_ + j)] = p;
                                pairwise[static_cast<std::size_t>(j * classes_ + i)] = 1 - p;
                            }
                        // Two classes too: libsvm (as scikit-learn bundles it) couples them with
                        // the same iteration, whose early stop is part of the result.
                        coupleProbabilities(classes_, pairwise, probability);
                        ml::applyPostTransform(transform_, probability.data(), probability.size());
                        winner = std::max_element(probability.begin(), probability.end()) -
                                 probability.begin();
                        for (std::int64_t c = 0; c < classes_; ++c)
                            out[c] = static_cast<float>(probability[static_cast<std::size_t>(c)]);
                    } else if (classes_ == 2) {
                        out[0] = static_cast<float>(decisions[0]);
                        out[1] = static_cast<float>(-decisions[0]);
                        ml::applyPostTransform(transform_, out, 2);
                    } else {
                        for (std::int64_t p = 0; p < pairs; ++p)
                            out[p] = static_cast<float>(decisions[static_cast<std::size_t>(p)]);
                        ml::applyPostTransform(transform_, out, static_cast<std::size_t>(pairs));
                    }
                    labels_.write(labels, r, winner);
                }
            });
        outputs[0] = std::move(labels);
        outputs[1] = std::move(scores);
    }

  private:
    void runLinear(const std::vector<double>& x, ml::RowShape shape, Tensor& labels,
                   std::vector<Value>& outputs) const {
        const std::int64_t columns = linearRows_ == 1 && classes_ == 2 ? 2 : linearRows_;
        Tensor scores(DataType::Float, {shape.rows, columns});
        std::vector<double> row(static_cast<std::size_t>(linearRows_));
        for (std::int64_t r = 0; r < shape.rows; ++r) {
            for (std::int64_t c = 0; c < linearRows_; ++c) {
                double s = rho_[static_cast<std::size_t>(c)];
                for (std::int64_t f = 0; f < features_; ++f)
                    s += x[static_cast<std::size_t>(r * features_ + f)] *
                         coefficients_[static_cast<std::size_t>(c * features_ + f)];
                row[static_cast<std::size_t>(c)] = s;
            }
            float* out = scores.data<float>() + r * columns;
            if (columns == 2 && linearRows_ == 1) {
                labels_.write(labels, r, row[0] > 0 ? 1 : 0);
                double two[2] = {-row[0], row[0]};
                ml::applyPostTransform(transform_, two, 2);
                out[0] = static_cast<float>(two[0]);
                out[1] = static_cast<float>(two[1]);
                continue;
            }
            labels_.write(labels, r, std::max_element(row.begin(), row.end()) - row.begin());
            ml::applyPostTransform(transform_, row.data(), row.size());
            for (std::int64_t c = 0; c < columns; ++c)
                out[c] = static_cast<float>(row[static_cast<std::size_t>(c)]);
        }
        outputs[0] = std::move(labels);
        outputs[1] = std::move(scores);
    }

    KernelFunction kernel_;
    ml::ClassLabels labels_;
    ml::PostTransform transform_;
    std::vector<std::int64_t> vectorsPerClass_, starts_;
    std::vector<float> supportVectors_, coefficients_, rho_, probA_, probB_;
    std::int64_t classes_ = 0, vectorCount_ = 0, features_ = 0, linearRows_ = 0;
    bool probabilities_ = false;
};

class SvmRegressorKernel : public Kernel {
  public:
    explicit SvmRegressorKernel(const NodeInfo& node)
        : kernel_(node),
          transform_(ml::parsePostTransform(node)),
          supportVectors_(node.getFloats("support_vectors")),
          coefficients_(node.getFloats("coefficients")),
          rho_(node.getFloats("rho")),
          supports_(node.getInt("n_supports", 0)),
          oneClass_(node.getInt("one_class", 0) != 0) {
        if (rho_.empty()) rho_.push_back(0.0f);
        if (supports_ > 0) {
            if (coefficients_.size() != static_cast<std::size_t>(supports_) ||
                supportVectors_.size() % static_cast<std::size_t>(supports_) != 0)
                throw EngineError(
                    "SVMRegressor: coefficients and support_vectors do not fit n_supports = " +
                    std::to_string(supports_));
            features_ = static_cast<std::int64_t>(supportVectors_.size()) / supports_;
        } else {
            features_ =
                static_cast<std::int64_t>(coefficients_.size());  // linear: one weight per feature
        }
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const auto shape = ml::rowShapeOf(input);
        if (shape.features != features_)
            throw EngineError("SVMRegressor: input has " + std::to_string(shape.features) +
                              " features, the model " + std::to_string(features_));
        const auto x = rowsAsDouble(input);
        Tensor y(DataType::Float, {shape.rows, 1});
        float* out = y.data<float>();
        ctx.pool().parallelFor(
            shape.rows, 4.0 * static_cast<double>(std::max<std::int64_t>(1, supports_) * features_),
            [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t r = b; r < e; ++r) {
                    const double* row = x.data() + r * features_;
                    double s = rho_[0];
                    if (supports_ > 0) {
                        for (std::int64_t v = 0; v < supports_; ++v)
                            s += coefficients_[static_cast<std::size_t>(v)] *
                                 kernel_(row, supportVectors_.data() + v * features_, features_);
                    } else {
                        for (std::int64_t f = 0; f < features_; ++f)
                            s += row[f] * coefficients_[static_cast<std::size_t>(f)];
                    }
                    if (oneClass_) s = s > 0 ? 1.0 : -1.0;
                    ml::applyPostTransform(transform_, &s, 1);
                    out[r] = static_cast<float>(s);
                }
            });
        outputs[0] = std::move(y);
    }

  private:
    KernelFunction kernel_;
    ml::PostTransform transform_;
    std::vector<float> supportVectors_, coefficients_, rho_;
    std::int64_t supports_ = 0, features_ = 0;
    bool oneClass_ = false;
};

}  // namespace

void registerMlSvmOps(KernelRegistry& registry) {
    registry.add<SvmClassifierKernel>("SVMClassifier", 1, kLatestOpset, "ai.onnx.ml");
    registry.add<SvmRegressorKernel>("SVMRegressor", 1, kLatestOpset, "ai.onnx.ml");
}

}  // namespace onnxlens::engine::ops
