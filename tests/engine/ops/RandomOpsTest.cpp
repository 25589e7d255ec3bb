// Random operators checked on statistical properties: shape, type, range, sample mean and
// variance within a few standard errors of large samples, and reproducibility with a seed.
#include <gtest/gtest.h>

#include <cmath>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

constexpr std::int64_t kSamples = 200000;

struct Moments {
    double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments momentsOf(const Tensor& t) {
    Moments m;
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = t.valueAsDouble(i);
        m.mean += v;
        m.min = std::min(m.min, v);
        m.max = std::max(m.max, v);
    }
    m.mean /= double(n);
    for (std::int64_t i = 0; i < n; ++i) m.variance += std::pow(t.valueAsDouble(i) - m.mean, 2);
    m.variance /= double(n);
    return m;
}

OneNodeSpec generator(const std::string& op, std::function<void(onnx::NodeProto&)> attributes,
                      std::vector<Value> inputs = {}) {
    OneNodeSpec spec;
    spec.opType = op;
    spec.opset = 17;
    spec.inputs = std::move(inputs);
    spec.attributes = std::move(attributes);
    return spec;
}

TEST(RandomUniformOpTest, ShapeTypeRangeAndMoments) {
    auto out = runOneNodeTensor(generator("RandomUniform", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{kSamples / 100, 100});
        setAttr(n, "low", -2.0f);
        setAttr(n, "high", 4.0f);
        setAttr(n, "dtype", std::int64_t{11});
    }));
    EXPECT_EQ(out.dtype(), DataType::Double);
    EXPECT_EQ(out.shape(), (Shape{kSamples / 100, 100}));
    const Moments m = momentsOf(out);
    EXPECT_GE(m.min, -2.0);
    EXPECT_LT(m.max, 4.0);
    // Uniform(-2, 4): mean 1, variance 36/12 = 3; standard error of the mean sqrt(3/n) ~ 0.004.
    EXPECT_NEAR(m.mean, 1.0, 0.02);
    EXPECT_NEAR(m.variance, 3.0, 0.05);
}

// high is excluded in the output's type too: a draw just under 1 rounds to 1.0 in float16 (about
// one draw in 8,000 here), and is drawn again; a range no float16 value lies in still ends.
TEST(RandomUniformOpTest, HighIsExcludedAfterRoundingToTheOutputType) {
    auto out = runOneNodeTensor(generator("RandomUniform", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{kSamples});
        setAttr(n, "high", 1.0f);
        setAttr(n, "dtype", std::int64_t{10});
        setAttr(n, "seed", 7.0f);
    }));
    EXPECT_EQ(out.dtype(), DataType::Float16);
    const Moments m = momentsOf(out);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
    auto narrow = runOneNodeTensor(generator("RandomUniform", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{4});
        setAttr(n, "low", 1.0009f);
        setAttr(n, "high", 1.00095f);
        setAttr(n, "dtype", std::int64_t{10});
    }));
    EXPECT_EQ(narrow.numel(), 4);
}

TEST(RandomNormalOpTest, MeanAndScale) {
    auto out = runOneNodeTensor(generator("RandomNormal", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{kSamples});
        setAttr(n, "mean", 5.0f);
        setAttr(n, "scale", 0.5f);
    }));
    EXPECT_EQ(out.dtype(), DataType::Float);
    const Moments m = momentsOf(out);
    EXPECT_NEAR(m.mean, 5.0, 0.01);  // standard error 0.5 / sqrt(n) ~ 0.0011
    EXPECT_NEAR(std::sqrt(m.variance), 0.5, 0.01);
}

TEST(RandomLikeOpsTest, ShapeAndTypeFollowTheInputUnlessDtypeIsGiven) {
    const Tensor input = Tensor::zeros(DataType::Double, {3, 0, 2});
    auto same = runOneNodeTensor(generator("RandomUniformLike", {}, {input}));
    EXPECT_EQ(same.dtype(), DataType::Double);
    EXPECT_EQ(same.shape(), (Shape{3, 0, 2}));

    auto half = runOneNodeTensor(generator(
        "RandomNormalLike", [](onnx::NodeProto& n) { setAttr(n, "dtype", std::int64_t{10}); },
        {Tensor::zeros(DataType::Float, {4, 5})}));
    EXPECT_EQ(half.dtype(), DataType::Float16);
    EXPECT_EQ(half.shape(), (Shape{4, 5}));

    // An integer input without dtype: random integers are not defined by the operator.
    auto r = runOneNode(generator("RandomUniformLike", {}, {Tensor::zeros(DataType::Int32, {2})}));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("float16, float or double"), std::string::npos)
        << r.error().message;
}

TEST(RandomOpsTest, SeedMakesSessionsReproducible) {
    auto seeded = [](float seed) {
        return generator("RandomNormal", [seed](onnx::NodeProto& n) {
            setAttr(n, "shape", std::vector<std::int64_t>{64});
            setAttr(n, "seed", seed);
        });
    };
    auto first = runOneNodeTensor(seeded(3.0f));
    auto second = runOneNodeTensor(seeded(3.0f));
    auto other = runOneNodeTensor(seeded(4.0f));
    EXPECT_EQ(first.span<float>().size(), 64u);
    EXPECT_TRUE(std::equal(first.span<float>().begin(), first.span<float>().end(),
                           second.span<float>().begin()));
    EXPECT_FALSE(std::equal(first.span<float>().begin(), first.span<float>().end(),
                            other.span<float>().begin()));

    // Unseeded sessions draw different values.
    auto unseeded = generator("RandomUniform", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{64});
    });
    auto u1 = runOneNodeTensor(unseeded), u2 = runOneNodeTensor(unseeded);
    EXPECT_FALSE(
        std::equal(u1.span<float>().begin(), u1.span<float>().end(), u2.span<float>().begin()));
}

TEST(RandomOpsTest, BadAttributesAreRejected) {
    auto r = runOneNode(generator("RandomUniform", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{2});
        setAttr(n, "low", 1.0f);
        setAttr(n, "high", 0.0f);
    }));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("low must not exceed high"), std::string::npos)
        << r.error().message;
    r = runOneNode(generator("RandomNormal", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{-1});
    }));
    ASSERT_FALSE(r);
    r = runOneNode(generator("RandomNormal", [](onnx::NodeProto& n) {
        setAttr(n, "shape", std::vector<std::int64_t>{2});
        setAttr(n, "dtype", std::int64_t{6});
    }));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("int32"), std::string::npos) << r.error().message;
}

TEST(BernoulliOpTest, ExtremesAreExactAndTheMeanFollowsP) {
    std::vector<float> p(kSamples, 0.3f);
    p[0] = 0.0f;
    p[1] = 1.0f;
    auto out = runOneNodeTensor(generator("Bernoulli", {}, {makeTensor<float>({kSamples}, p)}));
    EXPECT_EQ(out.dtype(), DataType::Float);
    const auto values = out.span<float>();
    EXPECT_EQ(values[0], 0.0f);
    EXPECT_EQ(values[1], 1.0f);
    const Moments m = momentsOf(out);
    EXPECT_EQ(m.min, 0.0);
    EXPECT_EQ(m.max, 1.0);
    EXPECT_NEAR(m.mean, 0.3, 0.01);  // standard error sqrt(0.21 / n) ~ 0.001
}

TEST(BernoulliOpTest, OutputTypeAttribute) {
    auto out = runOneNodeTensor(
        generator("Bernoulli", [](onnx::NodeProto& n) { setAttr(n, "dtype", std::int64_t{9}); },
                  {makeTensor<double>({2, 2}, {1, 0, 1, 0})}));
    EXPECT_EQ(out.dtype(), DataType::Bool);
    EXPECT_EQ(out.shape(), (Shape{2, 2}));
    const auto v = out.span<bool>();
    EXPECT_EQ(std::vector<bool>(v.begin(), v.end()), (std::vector<bool>{true, false, true, false}));
}

TEST(BernoulliOpTest, ProbabilityOutsideUnitIntervalIsAnError) {
    auto r = runOneNode(generator("Bernoulli", {}, {makeTensor<float>({2}, {0.5f, 1.5f})}));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("[0, 1]"), std::string::npos) << r.error().message;
}

TEST(MultinomialOpTest, FrequenciesFollowTheSoftmaxOfTheLogits) {
    // Row 0: log(0.2), log(0.8) -> P = 0.2 / 0.8. Row 1: one overwhelming class.
    auto out = runOneNodeTensor(
        generator("Multinomial",
                  [](onnx::NodeProto& n) {
                      setAttr(n, "sample_size", std::int64_t{kSamples});
                      setAttr(n, "dtype", std::int64_t{7});
                  },
                  {makeTensor<float>({2, 2}, {std::log(0.2f), std::log(0.8f), -100.0f, 100.0f})}));
    EXPECT_EQ(out.dtype(), DataType::Int64);
    EXPECT_EQ(out.shape(), (Shape{2, kSamples}));
    const auto v = out.span<std::int64_t>();
    std::int64_t ones = 0;
    for (std::int64_t i = 0; i < kSamples; ++i) {
        ASSERT_TRUE(v[i] == 0 || v[i] == 1);
        ones += v[i];
    }
    EXPECT_NEAR(double(ones) / kSamples, 0.8, 0.01);
    for (std::int64_t i = kSamples; i < 2 * kSamples; ++i) ASSERT_EQ(v[i], 1);
}

TEST(MultinomialOpTest, DefaultsAndErrors) {
    auto out = runOneNodeTensor(
        generator("Multinomial", {}, {makeTensor<float>({3, 4}, std::vector<float>(12, 0.0f))}));
    EXPECT_EQ(out.dtype(), DataType::Int32);
    EXPECT_EQ(out.shape(), (Shape{3, 1}));
    for (auto k : out.span<std::int32_t>()) EXPECT_TRUE(k >= 0 && k < 4);

    auto r = runOneNode(generator("Multinomial", {}, {makeTensor<float>({4}, {0, 0, 0, 0})}));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("[batch, classes]"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace onnxlens::testing
