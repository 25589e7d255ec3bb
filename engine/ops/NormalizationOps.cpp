// Normalizations: BatchNormalization, InstanceNormalization, GroupNormalization,
// LayerNormalization, RMSNormalization, LRN, MeanVarianceNormalization, and ONNX Runtime's
// default-domain SimplifiedLayerNormalization. Statistics are accumulated in double whatever the
// element type.
#include <cmath>
#include <type_traits>

#include "NormalizationChannelLayout.h"
#include "OpFamilies.h"
#include "ReduceAxesPlan.h"
#include "ReduceNumeric.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {
namespace {

// `t` broadcast (numpy, right-aligned) to `target`, flattened; throws when it does not fit.
std::vector<double> broadcastToDoubles(const Tensor& t, const Shape& target, const char* what) {
    bool fits = t.shape().size() <= target.size();
    for (std::size_t i = 1; fits && i <= t.shape().size(); ++i) {
        std::int64_t d = t.shape()[t.shape().size() - i];
        fits = d == 1 || d == target[target.size() - i];
    }
    require(fits, [&] {
        return std::string(what) + " of shape " + shapeToString(t.shape()) +
               " does not broadcast to " + shapeToString(target);
    });
    std::vector<double> source = elementsAsDoubles(t);
    auto strides = broadcastStrides(t.shape(), target);
    std::vector<double> out(static_cast<std::size_t>(shapeElementCount(target)));
    std::vector<std::int64_t> index(target.size(), 0);
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = source[static_cast<std::size_t>(offset)];
        for (std::size_t d = target.size(); d-- > 0;) {
            offset += strides[d];
            if (++index[d] < target[d]) break;
            offset -= strides[d] * target[d];
            index[d] = 0;
        }
    }
    return out;
}

// A float tensor's elements when its layout is `target`'s (each dim equal, or 1 where the target's
// is): read in place instead of broadcast; else null.
const float* floatsInPlace(const Tensor& t, const Shape& target) {
    if (t.dtype() != DataType::Float || t.numel() != shapeElementCount(target) ||
        t.shape().size() > target.size())
        return nullptr;
    for (std::size_t i = 1; i <= t.shape().size(); ++i)
        if (t.shape()[t.shape().size() - i] != target[target.size() - i]) return nullptr;
    return t.data<float>();
}

void requireFloatInput(const Tensor& x, const char* op) {
    require(isFloatingPoint(x.dtype()), [&] {
        return std::string(op) + " needs a floating-point input, got " + dataTypeName(x.dtype());
    });
}

// Mean and population variance of `count` consecutive elements.
template <class T>
std::pair<double, double> meanAndVariance(const T* p, std::int64_t count) {
    if constexpr (std::is_same_v<T, float>) {
        if (count == 0) return {0.0, 0.0};
        return floatMoments(p, count);
    }
    double sum = 0;
    for (std::int64_t i = 0; i < count; ++i) sum += toAccumulator<double>(p[i]);
    double mean = count ? sum / static_cast<double>(count) : 0.0;
    double squares = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        double d = toAccumulator<double>(p[i]) - mean;
        squares += d * d;
    }
    return {mean, count ? squares / static_cast<double>(count) : 0.0};
}

// y = x * a[c] + b[c] over [N, C, spatial...]: the affine form every normalization ends with.
// `perElement` params (BatchNormalization spatial=0) have C * spatial entries instead of C.
template <class T>
void applyChannelAffine(KernelContext& ctx, const T* x, T* y, std::int64_t n, std::int64_t c,
                        std::int64_t spatial, const std::vector<double>& a,
                        const std::vector<double>& b, bool perElement) {
    ctx.pool().parallelFor(
        n * c, static_cast<double>(spatial) * 2, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t nc = begin; nc < end; ++nc) {
                std::int64_t channel = nc % c;
                const T* in = x + nc * spatial;
                T* out = y + nc * spatial;
                for (std::int64_t s = 0; s < spatial; ++s) {
                    auto p = static_cast<std::size_t>(perElement ? channel * spatial + s : channel);
                    out[s] = fromDouble<T>(toAccumulator<double>(in[s]) * a[p] + b[p]);
                }
            }
        });
}

class BatchNormalizationKernel : public Kernel {
  public:
    explicit BatchNormalizationKernel(const NodeInfo& node)
        : epsilon_(node.getFloat("epsilon", 1e-5f)), momentum_(node.getFloat("momentum", 0.9f)) {
        if (node.opsetVersion() >= 14) {
            training_ = node.getInt("training_mode", 0) != 0;
        } else {
            // Before opset 14 the statistics outputs exist only in training mode.
            bool extraOutputs = false;
            for (int i = 1; i < node.outputCount(); ++i) extraOutputs |= node.hasOutput(i);
            training_ = extraOutputs && node.getInt("is_test", 0) == 0;
        }
        spatial_ = node.getInt("spatial", 1) != 0;
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "BatchNormalization");
        ChannelLayout l = channelLayout(x, "BatchNormalization");
        std::vector<double> scale = elementsAsDoubles(inputTensor(inputs, 1));
        std::vector<double> bias = elementsAsDoubles(inputTensor(inputs, 2));
        const Tensor& meanInput = inputTensor(inputs, 3);
        const Tensor& varInput = inputTensor(inputs, 4);
        std::vector<double> mean = elementsAsDoubles(meanInput);
        std::vector<double> var = elementsAsDoubles(varInput);

        auto c = static_cast<std::size_t>(l.c);
        bool perElement = !spatial_ && !training_ && scale.size() != c;
        std::size_t params = perElement ? c * static_cast<std::size_t>(l.spatial) : c;
        for (const auto* v : {&scale, &bias, &mean, &var})
            require(v->size() == params, [&] {
                return "BatchNormalization: scale, B, mean and var need " + std::to_string(params) +
                       " elements (channels " + std::to_string(l.c) + ")";
            });

        std::vector<double> batchMean, batchVar;
        if (training_) {
            batchMean.assign(c, 0.0);
            batchVar.assign(c, 0.0);
            dispatchFloat(x.dtype(), [&]<class T>() {
                channelStatistics(x.data<T>(), l, batchMean, batchVar);
            });
        }
        const auto& useMean = training_ ? batchMean : mean;
        const auto& useVar = training_ ? batchVar : var;
        std::vector<double> a(params), b(params);
        for (std::size_t i = 0; i < params; ++i) {
            a[i] = scale[i] / std::sqrt(useVar[i] + epsilon_);
            b[i] = bias[i] - useMean[i] * a[i];
        }
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            applyChannelAffine(ctx, x.data<T>(), y.data<T>(), l.n, l.c, l.spatial, a, b,
                               perElement);
        });
        outputs[0] = Value(std::move(y));
        if (!training_) return;
        std::vector<double> runningMean(c), runningVar(c);
        for (std::size_t i = 0; i < c; ++i) {
            runningMean[i] = mean[i] * momentum_ + batchMean[i] * (1 - momentum_);
            runningVar[i] = var[i] * momentum_ + batchVar[i] * (1 - momentum_);
        }
        Shape channels{l.c};
        if (outputs.size() > 1)
            outputs[1] = Value(doublesToTensor(runningMean, meanInput.dtype(), channels));
        if (outputs.size() > 2)
            outputs[2] = Value(doublesToTensor(runningVar, varInput.dtype(), channels));
        if (outputs.size() > 3)
            outputs[3] = Value(doublesToTensor(batchMean, meanInput.dtype(), channels));
        if (outputs.size() > 4)
            outputs[4] = Value(doublesToTensor(batchVar, varInput.dtype(), channels));
    }

  private:
    template <class T>
    static void channelStatistics(const T* x, const ChannelLayout& l, std::vector<double>& mean,
                                  std::vector<double>& var) {
        auto count = static_cast<double>(l.n * l.spatial);
        for (std::int64_t ch = 0; ch < l.c; ++ch) {
            double sum = 0;
            for (std::int64_t n = 0; n < l.n; ++n) {
                const T* p = x + (n * l.c + ch) * l.spatial;
                for (std::int64_t s = 0; s < l.spatial; ++s) sum += toAccumulator<double>(p[s]);
            }
            double m = count > 0 ? sum / count : 0.0;
            double squares = 0;
            for (std::int64_t n = 0; n < l.n; ++n) {
                const T* p = x + (n * l.c + ch) * l.spatial;
                for (std::int64_t s = 0; s < l.spatial; ++s) {
                    double d = toAccumulator<double>(p[s]) - m;
                    squares += d * d;
                }
            }
            mean[static_cast<std::size_t>(ch)] = m;
            var[static_cast<std::size_t>(ch)] = count > 0 ? squares / count : 0.0;
        }
    }

    double epsilon_;
    double momentum_;
    bool training_ = false;
    bool spatial_ = true;
};

class InstanceNormalizationKernel : public Kernel {
  public:
    explicit InstanceNormalizationKernel(const NodeInfo& node)
        : epsilon_(node.getFloat("epsilon", 1e-5f)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "InstanceNormalization");
        ChannelLayout l = channelLayout(x, "InstanceNormalization");
        std::vector<double> scale = elementsAsDoubles(inputTensor(inputs, 1));
        std::vector<double> bias = elementsAsDoubles(inputTensor(inputs, 2));
        require(scale.size() == static_cast<std::size_t>(l.c) && bias.size() == scale.size(), [&] {
            return "InstanceNormalization: scale and B need one element per channel (" +
                   std::to_string(l.c) + ")";
        });
        // One affine (a, b) per (n, c) instance, laid out as N*C "channels" of one image.
        auto instances = static_cast<std::size_t>(l.n * l.c);
        std::vector<double> a(instances), b(instances);
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            ctx.pool().parallelFor(l.n * l.c, static_cast<double>(l.spatial) * 3,
                                   [&](std::int64_t begin, std::int64_t end) {
                                       for (std::int64_t i = begin; i < end; ++i) {
                                           auto [mean, var] =
                                               meanAndVariance(in + i * l.spatial, l.spatial);
                                           auto k = static_cast<std::size_t>(i);
                                           auto ch = static_cast<std::size_t>(i % l.c);
                                           a[k] = scale[ch] / std::sqrt(var + epsilon_);
                                           b[k] = bias[ch] - mean * a[k];
                                       }
                                   });
            applyChannelAffine(ctx, in, y.data<T>(), 1, l.n * l.c, l.spatial, a, b, false);
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    double epsilon_;
};

// GroupNormalization: the channels split into num_groups contiguous groups, each normalized over
// its channels and spatial dims per sample. Opset 18 gave scale and bias one value per group;
// opset 21 corrected that to one per channel.
class GroupNormalizationKernel : public Kernel {
  public:
    explicit GroupNormalizationKernel(const NodeInfo& node)
        : epsilon_(node.getFloat("epsilon", 1e-5f)),
          groups_(node.getInt("num_groups")),
          perChannelAffine_(node.opsetVersion() >= 21) {
        require(groups_ > 0, [&] {
            return "GroupNormalization: num_groups must be positive, got " +
                   std::to_string(groups_);
        });
        // Statistics run in double whatever stash_type asks: at least as precise as float32.
        const std::int64_t stash = node.getInt("stash_type", 1);
        require(stash == 1 || stash == 10 || stash == 11 || stash == 16, [&] {
            return "GroupNormalization: unsupported stash_type " + std::to_string(stash);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "GroupNormalization");
        ChannelLayout l = channelLayout(x, "GroupNormalization");
        require(l.c % groups_ == 0, [&] {
            return "GroupNormalization: " + std::to_string(l.c) + " channels do not split into " +
                   std::to_string(groups_) + " groups";
        });
        const std::int64_t perGroup = l.c / groups_;
        std::vector<double> scale = elementsAsDoubles(inputTensor(inputs, 1));
        std::vector<double> bias = elementsAsDoubles(inputTensor(inputs, 2));
        const auto affineCount = static_cast<std::size_t>(perChannelAffine_ ? l.c : groups_);
        require(scale.size() == affineCount && bias.size() == affineCount, [&] {
            return std::string("GroupNormalization: scale and bias need one element per ") +
                   (perChannelAffine_ ? "channel (" : "group (") + std::to_string(affineCount) +
                   ")";
        });
        auto instances = static_cast<std::size_t>(l.n * l.c);
        std::vector<double> a(instances), b(instances);
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            const std::int64_t groupSize = perGroup * l.spatial;
            ctx.pool().parallelFor(
                l.n * groups_, static_cast<double>(groupSize) * 3,
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t i = begin; i < end; ++i) {
                        auto [mean, var] = meanAndVariance(in + i * groupSize, groupSize);
                        const double inverse = 1.0 / std::sqrt(var + epsilon_);
                        const std::int64_t group = i % groups_;
                        for (std::int64_t k = 0; k < perGroup; ++k) {
                            const auto channel = static_cast<std::size_t>(group * perGroup + k);
                            const auto affine =
                                perChannelAffine_ ? channel : static_cast<std::size_t>(group);
                            const auto at = static_cast<std::size_t>(i * perGroup + k);
                            a[at] = scale[affine] * inverse;
                            b[at] = bias[affine] - mean * a[at];
                        }
                    }
                });
            applyChannelAffine(ctx, in, y.data<T>(), 1, l.n * l.c, l.spatial, a, b, false);
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    double epsilon_;
    std::int64_t groups_;
    bool perChannelAffine_;
};

// RMSNormalization (opset 23), and SimplifiedLayerNormalization (ONNX Runtime's contrib
// schema in the default domain, any opset): x / sqrt(mean(x^2) + epsilon) * scale over the dims
// from `axis` on, scale broadcast to them. No mean is subtracted and there is no bias. The
// optional second output (SimplifiedLayerNormalization's inv_std_var) holds 1 / sqrt(mean(x^2) +
// epsilon) per row in stash_type, shaped as X with the normalized dims 1.
class RmsNormalizationKernel : public Kernel {
  public:
    explicit RmsNormalizationKernel(const NodeInfo& node)
        : name_(node.opType()),
          axis_(node.getInt("axis", -1)),
          epsilon_(node.getFloat("epsilon", 1e-5f)) {
        const std::int64_t stash = node.getInt("stash_type", 1);
        require(stash == 1 || stash == 10 || stash == 11 || stash == 16,
                [&] { return name_ + ": unsupported stash_type " + std::to_string(stash); });
        stashType_ = static_cast<DataType>(stash);
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, name_.c_str());
        const std::int64_t axis = normalizeAxis(axis_, x.rank());
        const Shape normalizedShape(x.shape().begin() + axis, x.shape().end());
        const std::int64_t outer = shapeElementCount(std::span(x.shape()).first(axis));
        const std::int64_t inner = shapeElementCount(normalizedShape);
        const std::vector<double> scale =
            broadcastToDoubles(inputTensor(inputs, 1), normalizedShape, (name_ + " scale").c_str());
        std::vector<double> invStdDevs(static_cast<std::size_t>(outer));
        Tensor y(x.dtype(), x.shape());
        // Float rows normalise in float (the statistic stays in double): one vectorised pass.
        const std::vector<float> scaleF(scale.begin(), scale.end());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            ctx.pool().parallelFor(
                outer, static_cast<double>(inner) * 4, [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t r = begin; r < end; ++r) {
                        const T* row = in + r * inner;
                        T* dst = out + r * inner;
                        double squares = 0;
                        for (std::int64_t i = 0; i < inner; ++i) {
                            const double v = toAccumulator<double>(row[i]);
                            squares += v * v;
                        }
                        const double meanSquare =
                            inner ? squares / static_cast<double>(inner) : 0.0;
                        const double inverse = 1.0 / std::sqrt(meanSquare + epsilon_);
                        invStdDevs[static_cast<std::size_t>(r)] = inverse;
                        if constexpr (std::is_same_v<T, float>) {
                            const float s = static_cast<float>(inverse);
                            const float* g = scaleF.data();
                            for (std::int64_t i = 0; i < inner; ++i) dst[i] = row[i] * s * g[i];
                            continue;
                        }
                        for (std::int64_t i = 0; i < inner; ++i)
                            dst[i] = fromDouble<T>(toAccumulator<double>(row[i]) * inverse *
                                                   scale[static_cast<std::size_t>(i)]);
                    }
                });
        });
        outputs[0] = Value(std::move(y));
        if (outputs.size() > 1) {
            Shape statShape(x.shape().begin(), x.shape().begin() + axis);
            statShape.resize(x.shape().size(), 1);
            outputs[1] = Value(doublesToTensor(invStdDevs, stashType_, statShape));
        }
    }

  private:
    std::string name_;
    std::int64_t axis_;
    double epsilon_;
    DataType stashType_;
};

class LayerNormalizationKernel : public Kernel {
  public:
    explicit LayerNormalizationKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", -1)), epsilon_(node.getFloat("epsilon", 1e-5f)) {
        std::int64_t stash = node.getInt("stash_type", 1);
        require(stash == 1 || stash == 11, [&] {
            return "LayerNormalization: unsupported stash_type " + std::to_string(stash);
        });
        stashType_ = static_cast<DataType>(stash);
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "LayerNormalization");
        std::int64_t axis = normalizeAxis(axis_, x.rank());
        Shape normalizedShape(x.shape().begin() + axis, x.shape().end());
        std::int64_t outer = shapeElementCount(std::span(x.shape()).first(axis));
        std::int64_t inner = shapeElementCount(normalizedShape);
        const Tensor& scaleTensor = inputTensor(inputs, 1);
        const Tensor* biasTensor = optionalInputTensor(inputs, 2);
        // Float rows normalise in float (statistics stay in double): one vectorised pass, with
        // float scale and bias of the normalized dims' layout read in place (the usual case), else
        // broadcast and converted.
        const bool floatRows = x.dtype() == DataType::Float;
        const float* g = floatRows ? floatsInPlace(scaleTensor, normalizedShape) : nullptr;
        const float* b =
            floatRows && biasTensor ? floatsInPlace(*biasTensor, normalizedShape) : nullptr;
        std::vector<double> scale, bias;
        std::vector<float> scaleF, biasF;
        if (!g) {
            scale = broadcastToDoubles(scaleTensor, normalizedShape, "LayerNormalization scale");
            scaleF.assign(scale.begin(), scale.end());
            g = scaleF.data();
        }
        if (biasTensor && !b) {
            bias = broadcastToDoubles(*biasTensor, normalizedShape, "LayerNormalization B");
            biasF.assign(bias.begin(), bias.end());
            b = biasF.data();
        }
        if (!b) {
            biasF.assign(static_cast<std::size_t>(inner), 0.0f);
            b = biasF.data();
        }
        auto rows = static_cast<std::size_t>(outer);
        std::vector<double> means(rows), invStdDevs(rows);
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            ctx.pool().parallelFor(
                outer, static_cast<double>(inner) * 5, [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t r = begin; r < end; ++r) {
                        const T* row = in + r * inner;
                        T* dst = out + r * inner;
                        auto [mean, var] = meanAndVariance(row, inner);
                        double inv = 1.0 / std::sqrt(var + epsilon_);
                        means[static_cast<std::size_t>(r)] = mean;
                        invStdDevs[static_cast<std::size_t>(r)] = inv;
                        if constexpr (std::is_same_v<T, float>) {
                            const float m = static_cast<float>(mean), s = static_cast<float>(inv);
                            for (std::int64_t i = 0; i < inner; ++i)
                                dst[i] = (row[i] - m) * s * g[i] + b[i];
                            continue;
                        }
                        for (std::int64_t i = 0; i < inner; ++i) {
                            auto k = static_cast<std::size_t>(i);
                            double v = (toAccumulator<double>(row[i]) - mean) * inv * scale[k];
                            if (!bias.empty()) v += bias[k];
                            dst[i] = fromDouble<T>(v);
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(y));
        Shape statShape(x.shape().begin(), x.shape().begin() + axis);
        statShape.resize(x.shape().size(), 1);
        if (outputs.size() > 1) outputs[1] = Value(doublesToTensor(means, stashType_, statShape));
        if (outputs.size() > 2)
            outputs[2] = Value(doublesToTensor(invStdDevs, stashType_, statShape));
    }

  private:
    std::int64_t axis_;
    double epsilon_;
    DataType stashType_;
};

class LrnKernel : public Kernel {
  public:
    explicit LrnKernel(const NodeInfo& node)
        : alpha_(node.getFloat("alpha", 1e-4f)),
          beta_(node.getFloat("beta", 0.75f)),
          bias_(node.getFloat("bias", 1.0f)),
          size_(node.getInt("size")) {
        require(size_ > 0,
                [&] { return "LRN: size must be positive, got " + std::to_string(size_); });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "LRN");
        ChannelLayout l = channelLayout(x, "LRN");
        std::int64_t before = (size_ - 1) / 2;
        std::int64_t after = size_ - 1 - before;  // ceil((size - 1) / 2)
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            ctx.pool().parallelFor(
                l.n * l.c,
                static_cast<double>(l.spatial) * static_cast<double>(std::min(size_, l.c)),
                [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t nc = begin; nc < end; ++nc) {
                        std::int64_t n = nc / l.c, c = nc % l.c;
                        std::int64_t first = std::max<std::int64_t>(0, c - before);
                        std::int64_t last = std::min<std::int64_t>(l.c - 1, c + after);
                        for (std::int64_t s = 0; s < l.spatial; ++s) {
                            double squares = 0;
                            for (std::int64_t k = first; k <= last; ++k) {
                                double v = toAccumulator<double>(in[(n * l.c + k) * l.spatial + s]);
                                squares += v * v;
                            }
                            double denom = std::pow(
                                bias_ + alpha_ / static_cast<double>(size_) * squares, beta_);
                            std::int64_t i = nc * l.spatial + s;
                            out[i] = fromDouble<T>(toAccumulator<double>(in[i]) / denom);
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    double alpha_, beta_, bias_;
    std::int64_t size_;
};

class MeanVarianceNormalizationKernel : public Kernel {
  public:
    explicit MeanVarianceNormalizationKernel(const NodeInfo& node)
        : axes_(node.getInts("axes", {0, 2, 3})) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloatInput(x, "MeanVarianceNormalization");
        ReduceAxesPlan plan(x.shape(), reducedAxisMask(axes_, x.rank()));
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            auto count = static_cast<double>(plan.reducedCount());
            ctx.pool().parallelFor(
                plan.outputCount(), static_cast<double>(plan.reducedCount()) * 4,
                [&](std::int64_t begin, std::int64_t end) {
                    plan.forEachOutput(begin, end, [&](std::int64_t, std::int64_t base) {
                        double sum = 0;
                        plan.forEachReduced([&](std::int64_t off) {
                            sum += toAccumulator<double>(in[base + off]);
                        });
                        double mean = sum / count;
                        double squares = 0;
                        plan.forEachReduced([&](std::int64_t off) {
                            double d = toAccumulator<double>(in[base + off]) - mean;
                            squares += d * d;
                        });
                        // The schema's function body adds 1e-9 to the standard deviation.
                        double scale = 1.0 / (std::sqrt(squares / count) + 1e-9);
                        plan.forEachReduced([&](std::int64_t off) {
                            out[base + off] = fromDouble<T>(
                                (toAccumulator<double>(in[base + off]) - mean) * scale);
                        });
                    });
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    std::vector<std::int64_t> axes_;
};

}  // namespace

void registerNormalizationOps(KernelRegistry& registry) {
    registry.add<BatchNormalizationKernel>("BatchNormalization", 1);
    registry.add<InstanceNormalizationKernel>("InstanceNormalization", 1);
    registry.add<GroupNormalizationKernel>("GroupNormalization", 18);
    registry.add<RmsNormalizationKernel>("RMSNormalization", 23);
    // ONNX Runtime's contrib schema in the default domain, which ONNX never had.
    registry.add<RmsNormalizationKernel>("SimplifiedLayerNormalization", 1);
    // Opsets 1 to 16: ONNX Runtime's contrib schema in the default domain, the same operator.
    registry.add<LayerNormalizationKernel>("LayerNormalization", 1);
    // The optimizer's LayerNormalization pattern fusion in models below opset 17.
    registry.add<LayerNormalizationKernel>("LayerNormalization", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<LrnKernel>("LRN", 1);
    registry.add<MeanVarianceNormalizationKernel>("MeanVarianceNormalization", 9);
}

}  // namespace onnxlens::engine::ops
