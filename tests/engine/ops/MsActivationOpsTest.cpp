// The com.microsoft activations (Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, BiasSplitGelu)
// against double-precision references written here: optional bias, attributes, float16 and
// double tensors, the threaded block path, and malformed inputs (errors naming the node).
#include <cmath>
#include <functional>

#include "MsOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

using namespace ms;

double geluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// f(x [+ bias over the last axis]) elementwise.
std::vector<double> biasThen(const Tensor& x, const Tensor* bias,
                             const std::function<double(double)>& f) {
    auto v = doublesOf(x);
    const auto b = bias ? doublesOf(*bias) : std::vector<double>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = f(v[i] + (b.empty() ? 0.0 : b[i % b.size()]));
    return v;
}

engine::Tolerance toleranceFor(DataType type) {
    if (type == DataType::Float16) return {1e-2, 1e-2};
    if (type == DataType::Double) return {1e-9, 1e-9};
    return {1e-4, 1e-5};
}

TEST(MsActivationOps, GeluIsTheErfForm) {
    for (DataType type : {DataType::Float, DataType::Float16, DataType::Double}) {
        Tensor x = sample({2, 3, 5}, 1, type, 4.0f);
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(msSpec("Gelu", {Value(x)})),
                                 tensorOf(type, x.shape(), biasThen(x, nullptr, geluErf)),
                                 toleranceFor(type)))
            << dataTypeName(type);
    }
    // A scalar input.
    Tensor scalar = Tensor::scalar(0.7f);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(msSpec("Gelu", {Value(scalar)})),
                             Tensor::scalar(static_cast<float>(geluErf(0.7)))));
}

TEST(MsActivationOps, FastGeluIsTheTanhFormWithAnOptionalBias) {
    for (DataType type : {DataType::Float, DataType::Float16}) {
        Tensor x = sample({2, 3, 8}, 2, type, 4.0f), bias = sample({8}, 3, type);
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(msSpec("FastGelu", {Value(x)})),
                                 tensorOf(type, x.shape(), biasThen(x, nullptr, geluTanh)),
                                 toleranceFor(type)));
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(msSpec("FastGelu", {Value(x), Value(bias)})),
                                 tensorOf(type, x.shape(), biasThen(x, &bias, geluTanh)),
                                 toleranceFor(type)));
    }
}

TEST(MsActivationOps, BiasGeluAddsTheBiasThenAppliesErfGelu) {
    for (DataType type : {DataType::Float, DataType::Float16, DataType::Double}) {
        Tensor x = sample({4, 6}, 4, type, 4.0f), bias = sample({6}, 5, type);
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(msSpec("BiasGelu", {Value(x), Value(bias)})),
                                 tensorOf(type, x.shape(), biasThen(x, &bias, geluErf)),
                                 toleranceFor(type)));
    }
}

TEST(MsActivationOps, QuickGeluDefaultAndExplicitAlpha) {
    Tensor x = sample({3, 7}, 6, DataType::Float, 5.0f);
    auto quick = [](double alpha) {
        return [alpha](double v) { return v / (1.0 + std::exp(-alpha * v)); };
    };
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(msSpec("QuickGelu", {Value(x)})),
                     tensorOf(DataType::Float, x.shape(), biasThen(x, nullptr, quick(1.702)))));
    OneNodeSpec spec = msSpec("QuickGelu", {Value(x)});
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "alpha", -0.5f); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), tensorOf(DataType::Float, x.shape(),
                                                              biasThen(x, nullptr, quick(-0.5)))));
    Tensor half = x.castTo(DataType::Float16);
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(msSpec("QuickGelu", {Value(half)})),
                     tensorOf(DataType::Float16, x.shape(), biasThen(half, nullptr, quick(1.702))),
                     toleranceFor(DataType::Float16)));
}

TEST(MsActivationOps, ThreadedBlocksCoverEveryElement) {
    // Element counts that are not multiples of the kernels' blocks, split over four threads.
    for (DataType type : {DataType::Float, DataType::Float16}) {
        Tensor x = sample({3, 10007}, 7, type, 4.0f);
        auto out = runOneNode(msSpec("Gelu", {Value(x)}), 4);
        ASSERT_TRUE(out) << out.error().message;
        EXPECT_TRUE(tensorsClose(out->at(0).tensor(),
                                 tensorOf(type, x.shape(), biasThen(x, nullptr, geluErf)),
                                 toleranceFor(type)));
        Tensor rows = sample({300, 97}, 8, type, 4.0f), bias = sample({97}, 9, type);
        auto biased = runOneNode(msSpec("FastGelu", {Value(rows), Value(bias)}), 4);
        ASSERT_TRUE(biased) << biased.error().message;
        EXPECT_TRUE(tensorsClose(biased->at(0).tensor(),
                                 tensorOf(type, rows.shape(), biasThen(rows, &bias, geluTanh)),
                                 toleranceFor(type)));
    }
}

TEST(MsActivationOps, BiasAddAddsBiasAndSkip) {
    for (DataType type : {DataType::Float, DataType::Float16}) {
        Tensor x = sample({2, 3, 4}, 10, type), bias = sample({4}, 11, type),
               skip = sample({2, 3, 4}, 12, type);
        auto expected = doublesOf(x);
        const auto b = doublesOf(bias), s = doublesOf(skip);
        for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += b[i % 4] + s[i];
        EXPECT_TRUE(
            tensorsClose(runOneNodeTensor(msSpec("BiasAdd", {Value(x), Value(bias), Value(skip)})),
                         tensorOf(type, x.shape(), expected), toleranceFor(type)));
    }
}

TEST(MsActivationOps, BiasSplitGeluMultipliesTheLeftHalfByGeluOfTheRight) {
    for (DataType type : {DataType::Float, DataType::Float16}) {
        Tensor x = sample({2, 3, 8}, 13, type, 3.0f), bias = sample({8}, 14, type);
        const auto v = doublesOf(x), b = doublesOf(bias);
        std::vector<double> expected;
        for (std::size_t row = 0; row < 6; ++row)
            for (std::size_t i = 0; i < 4; ++i)
                expected.push_back((v[row * 8 + i] + b[i]) *
                                   geluErf(v[row * 8 + 4 + i] + b[4 + i]));
        Tensor y = runOneNodeTensor(msSpec("BiasSplitGelu", {Value(x), Value(bias)}));
        EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
        EXPECT_TRUE(tensorsClose(y, tensorOf(type, {2, 3, 4}, expected), toleranceFor(type)));
    }
}

TEST(MsActivationOps, MalformedBiasesAndShapesAreErrorsNamingTheNode) {
    Tensor x = sample({2, 3, 8}, 15);
    EXPECT_TRUE(failsWith(msSpec("FastGelu", {Value(x), Value(sample({7}, 1))}),
                          "bias must have shape [8]"));
    EXPECT_TRUE(failsWith(msSpec("FastGelu", {Value(x), Value(sample({1, 8}, 1))}),
                          "bias must have shape [8]"));
    EXPECT_TRUE(failsWith(msSpec("FastGelu", {Value(Tensor::scalar(1.0f)), Value(sample({1}, 1))}),
                          "needs an input of rank 1 or more"));
    EXPECT_TRUE(failsWith(msSpec("BiasGelu", {Value(x), Value(sample({3}, 1))}),
                          "bias must have shape [8]"));
    EXPECT_TRUE(
        failsWith(msSpec("BiasGelu", {Value(x)}), "has 1 inputs, the operator takes 2 to 2"));
    EXPECT_TRUE(failsWith(msSpec("BiasGelu", {Value(x), Value(sample({8}, 1, DataType::Double))}),
                          "bias must have the input's type float"));
    EXPECT_TRUE(failsWith(msSpec("Gelu", {Value(makeTensor<std::int32_t>({2}, {1, 2}))}),
                          "X must be a floating-point tensor"));
    EXPECT_TRUE(
        failsWith(msSpec("BiasAdd", {Value(x), Value(sample({8}, 1)), Value(sample({2, 8}, 1))}),
                  "skip must have X's type and shape"));
    EXPECT_TRUE(failsWith(msSpec("BiasAdd", {Value(sample({6, 8}, 1)), Value(sample({8}, 1)),
                                             Value(sample({6, 8}, 1))}),
                          "X must be 3-D [N, S, C]"));
    EXPECT_TRUE(failsWith(msSpec("BiasAdd", {Value(x), Value(sample({8}, 1))}),
                          "has 2 inputs, the operator takes 3 to 3"));
    EXPECT_TRUE(
        failsWith(msSpec("BiasSplitGelu", {Value(sample({1, 2, 7}, 1)), Value(sample({7}, 1))}),
                  "last dimension 7 does not split into two halves"));
    EXPECT_TRUE(failsWith(msSpec("BiasSplitGelu", {Value(x), Value(sample({4}, 1))}),
                          "bias must have shape [8]"));
}

}  // namespace
}  // namespace onnxlens::testing
