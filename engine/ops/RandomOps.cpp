// RandomUniform(Like), RandomNormal(Like), Bernoulli and Multinomial. Each kernel owns a
// generator: seeded from the `seed` attribute when given (runs of one session then continue the
// same stream, and two sessions of one model draw the same values), else from std::random_device.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>

#include "OpFamilies.h"

namespace onnxlens::engine::ops {

namespace {

class Generator {
  public:
    explicit Generator(const NodeInfo& node) {
        if (node.hasAttribute("seed")) {
            const float seed = node.getFloat("seed");
            std::uint32_t bits = 0;
            std::memcpy(&bits, &seed, sizeof bits);
            engine_.seed(bits);
        } else {
            engine_.seed(std::random_device{}());
        }
    }
    // Runs `draw(engine)` under the generator's lock (a session may be run from several threads).
    template <class F>
    void use(F&& draw) {
        std::lock_guard lock(mutex_);
        draw(engine_);
    }

  private:
    std::mutex mutex_;
    std::mt19937_64 engine_;
};

DataType floatOutputType(int onnxType) {
    const DataType type = dataTypeFromOnnx(onnxType);
    if (type != DataType::Float && type != DataType::Double && type != DataType::Float16)
        fail(std::string("random values must be float16, float or double, not ") +
             dataTypeName(type));
    return type;
}

// The `dtype` of a *Like operator: the attribute when present, else the input's type.
std::optional<DataType> likeOutputType(const NodeInfo& node) {
    if (!node.hasAttribute("dtype")) return std::nullopt;
    return floatOutputType(static_cast<int>(node.getInt("dtype")));
}

// Fills a tensor of a floating-point type with draws of `distribution`. With `below`, a draw
// whose value in the tensor's type is not below it is drawn again: RandomUniform's range is
// [low, high), and a double just under high rounds to high in float (one draw in ~10^7 for
// [-2, 4)) or float16. At most kRedraws times: a range too narrow for the type (float16 between
// 1.0009 and 1.00095) has no value of it, and the rounded draw stays.
constexpr int kRedraws = 16;

template <class Distribution>
void fillWith(Tensor& out, Generator& generator, Distribution distribution,
              std::optional<double> below = std::nullopt) {
    dispatchFloat(out.dtype(), [&]<class T>() {
        T* data = out.data<T>();
        const std::int64_t n = out.numel();
        generator.use([&](auto& engine) {
            for (std::int64_t i = 0; i < n; ++i) {
                T value = static_cast<T>(static_cast<float>(distribution(engine)));
                for (int redraw = 0; redraw < kRedraws && below && !(toDouble(value) < *below);
                     ++redraw)
                    value = static_cast<T>(static_cast<float>(distribution(engine)));
                data[i] = value;
            }
        });
    });
}

enum class Distribution { Uniform, Normal };

// RandomUniform / RandomNormal (shape from the attribute) and their *Like forms (shape, and by
// default type, from the input).
template <Distribution kind, bool like>
class RandomKernel : public Kernel {
  public:
    explicit RandomKernel(const NodeInfo& node) : generator_(node) {
        if constexpr (kind == Distribution::Uniform) {
            a_ = node.getFloat("low", 0.0f);
            b_ = node.getFloat("high", 1.0f);
            if (!(a_ <= b_)) fail("low must not exceed high");
        } else {
            a_ = node.getFloat("mean", 0.0f);
            b_ = node.getFloat("scale", 1.0f);
            if (!(b_ >= 0)) fail("scale must not be negative");
        }
        if constexpr (like) {
            type_ = likeOutputType(node);
        } else {
            type_ = floatOutputType(static_cast<int>(node.getInt("dtype", 1)));
            shape_ = node.getInts("shape");
            if (!node.hasAttribute("shape")) fail("the 'shape' attribute is required");
            shapeElementCount(shape_);  // validates: no negative dims, no overflow
        }
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        Shape shape = shape_;
        DataType type = type_.value_or(DataType::Float);
        if constexpr (like) {
            const Tensor& input = inputTensor(inputs, 0);
            shape = input.shape();
            if (!type_) type = floatOutputType(static_cast<int>(input.dtype()));
        }
        Tensor out(type, shape);
        if constexpr (kind == Distribution::Uniform)
            fillWith(out, generator_, std::uniform_real_distribution<double>(a_, b_),
                     // an empty range (low == high) gives low, as the distribution does
                     a_ < b_ ? std::optional<double>(b_) : std::nullopt);
        else
            fillWith(out, generator_, std::normal_distribution<double>(a_, b_));
        outputs[0] = Value(std::move(out));
    }

  private:
    Generator generator_;
    double a_ = 0, b_ = 1;
    std::optional<DataType> type_;
    Shape shape_;
};

// Output 1 with probability p (the input element), else 0.
class BernoulliKernel : public Kernel {
  public:
    explicit BernoulliKernel(const NodeInfo& node) : generator_(node) {
        if (node.hasAttribute("dtype"))
            type_ = dataTypeFromOnnx(static_cast<int>(node.getInt("dtype")));
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        Tensor out(type_.value_or(input.dtype()), input.shape());
        const std::int64_t n = input.numel();
        dispatchFloat(input.dtype(), [&]<class P>() {
            const P* p = input.data<P>();
            dispatchNumericOrBool(out.dtype(), [&]<class T>() {
                T* data = out.data<T>();
                std::uniform_real_distribution<double> uniform(0.0, 1.0);
                generator_.use([&](auto& engine) {
                    for (std::int64_t i = 0; i < n; ++i) {
                        const double probability = toDouble(p[i]);
                        if (!(probability >= 0.0 && probability <= 1.0))
                            fail("Bernoulli probabilities must lie in [0, 1], got " +
                                 std::to_string(probability));
                        data[i] = static_cast<T>(uniform(engine) < probability ? 1.0f : 0.0f);
                    }
                });
            });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    Generator generator_;
    std::optional<DataType> type_;
};

// Draws `sample_size` class indices per batch row from unnormalised log-probabilities.
class MultinomialKernel : public Kernel {
  public:
    explicit MultinomialKernel(const NodeInfo& node)
        : generator_(node),
          sampleSize_(node.getInt("sample_size", 1)),
          type_(dataTypeFromOnnx(static_cast<int>(node.getInt("dtype", 6)))) {
        if (type_ != DataType::Int32 && type_ != DataType::Int64)
            fail("Multinomial output must be int32 or int64");
        if (sampleSize_ < 0) fail("sample_size must not be negative");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        if (input.rank() != 2)
            fail("Multinomial input must be [batch, classes], got " + shapeToString(input.shape()));
        const std::int64_t batch = input.dim(0), classes = input.dim(1);
        if (classes == 0 && sampleSize_ > 0) fail("Multinomial needs at least one class");
        Tensor out(type_, {batch, sampleSize_});
        std::vector<double> cumulative(static_cast<std::size_t>(classes));
        dispatchFloat(input.dtype(), [&]<class P>() {
            const P* logits = input.data<P>();
            dispatchInteger(type_, [&]<class T>() {
                T* data = out.data<T>();
                generator_.use([&](auto& engine) {
                    for (std::int64_t b = 0; b < batch; ++b) {
                        const P* row = logits + b * classes;
                        double maxLogit = -INFINITY;
                        for (std::int64_t k = 0; k < classes; ++k)
                            maxLogit = std::max(maxLogit, toDouble(row[k]));
                        double total = 0;
                        for (std::int64_t k = 0; k < classes; ++k) {
                            total += std::exp(toDouble(row[k]) - maxLogit);
                            cumulative[static_cast<std::size_t>(k)] = total;
                        }
                        std::uniform_real_distribution<double> uniform(0.0, total);
                        for (std::int64_t s = 0; s < sampleSize_; ++s) {
                            const double u = uniform(engine);
                            auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
                            const auto k =
                                std::min<std::int64_t>(it - cumulative.begin(), classes - 1);
                            data[b * sampleSize_ + s] = static_cast<T>(k);
                        }
                    }
                });
            });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    Generator generator_;
    std::int64_t sampleSize_;
    DataType type_;
};

}  // namespace

void registerRandomOps(KernelRegistry& registry) {
    registry.add<RandomKernel<Distribution::Uniform, false>>("RandomUniform", 1);
    registry.add<RandomKernel<Distribution::Uniform, true>>("RandomUniformLike", 1);
    registry.add<RandomKernel<Distribution::Normal, false>>("RandomNormal", 1);
    registry.add<RandomKernel<Distribution::Normal, true>>("RandomNormalLike", 1);
    registry.add<BernoulliKernel>("Bernoulli", 15);
    registry.add<MultinomialKernel>("Multinomial", 7);
}

}  // namespace onnxlens::engine::ops
