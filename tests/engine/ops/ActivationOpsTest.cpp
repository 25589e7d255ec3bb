// Activation kernels against formulas evaluated in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

OneNodeSpec node(const std::string& op, std::vector<Value> inputs, int opset = 17,
                 std::function<void(onnx::NodeProto&)> attrs = {}) {
    OneNodeSpec spec{op, "", opset, std::move(inputs), 1, {}};
    spec.attributes = std::move(attrs);
    return spec;
}

const std::vector<float> kInputs{-4.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f, 7.0f};

// Applies f to kInputs and compares with the kernel's output.
void expectPointwise(const OneNodeSpec& spec, float (*f)(float)) {
    std::vector<float> expected;
    for (float v : kInputs) expected.push_back(f(v));
    auto y = runOneNodeTensor(spec);
    EXPECT_TRUE(tensorsClose(y, makeTensor<float>({7}, expected))) << spec.opType;
}

Tensor inputs() { return makeTensor<float>({7}, kInputs); }

TEST(ActivationOps, PointwiseDefaults) {
    expectPointwise(node("Relu", {inputs()}), [](float x) { return x > 0 ? x : 0.0f; });
    expectPointwise(node("LeakyRelu", {inputs()}), [](float x) { return x >= 0 ? x : 0.01f * x; });
    expectPointwise(node("Elu", {inputs()}), [](float x) { return x >= 0 ? x : std::exp(x) - 1; });
    expectPointwise(node("Selu", {inputs()}), [](float x) {
        const float alpha = 1.6732632f, gamma = 1.0507010f;
        return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1));
    });
    expectPointwise(node("Celu", {inputs()}),
                    [](float x) { return std::max(0.0f, x) + std::min(0.0f, std::exp(x) - 1); });
    expectPointwise(node("Sigmoid", {inputs()}),
                    [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    expectPointwise(node("HardSigmoid", {inputs()}),
                    [](float x) { return std::clamp(0.2f * x + 0.5f, 0.0f, 1.0f); });
    expectPointwise(node("HardSwish", {inputs()}),
                    [](float x) { return x * std::clamp(x / 6 + 0.5f, 0.0f, 1.0f); });
    expectPointwise(node("Tanh", {inputs()}), [](float x) { return std::tanh(x); });
    expectPointwise(node("Softplus", {inputs()}),
                    [](float x) { return std::log(std::exp(x) + 1); });
    expectPointwise(node("Softsign", {inputs()}), [](float x) { return x / (1 + std::fabs(x)); });
    expectPointwise(node("ThresholdedRelu", {inputs()}), [](float x) { return x > 1 ? x : 0.0f; });
    expectPointwise(node("Shrink", {inputs()}),
                    [](float x) { return x < -0.5f ? x : (x > 0.5f ? x : 0.0f); });
}

TEST(ActivationOps, AttributesAreRead) {
    auto leaky =
        node("LeakyRelu", {inputs()}, 17, [](onnx::NodeProto& n) { setAttr(n, "alpha", 0.5f); });
    expectPointwise(leaky, [](float x) { return x >= 0 ? x : 0.5f * x; });
    auto celu = node("Celu", {inputs()}, 17, [](onnx::NodeProto& n) { setAttr(n, "alpha", 2.0f); });
    expectPointwise(celu, [](float x) {
        return std::max(0.0f, x) + std::min(0.0f, 2 * (std::exp(x / 2) - 1));
    });
    auto shrink = node("Shrink", {inputs()}, 17, [](onnx::NodeProto& n) {
        setAttr(n, "lambd", 1.5f);
        setAttr(n, "bias", 1.5f);
    });
    expectPointwise(shrink,
                    [](float x) { return x < -1.5f ? x + 1.5f : (x > 1.5f ? x - 1.5f : 0.0f); });
    auto thresholded = node("ThresholdedRelu", {inputs()}, 17,
                            [](onnx::NodeProto& n) { setAttr(n, "alpha", 0.25f); });
    expectPointwise(thresholded, [](float x) { return x > 0.25f ? x : 0.0f; });
}

TEST(ActivationOps, SoftplusStaysFiniteForLargeInputs) {
    auto y = runOneNodeTensor(node("Softplus", {makeTensor<float>({2}, {100.0f, -100.0f})}));
    EXPECT_TRUE(tensorsClose(y, makeTensor<float>({2}, {100.0f, std::exp(-100.0f)})));
}

// Far below ln(the smallest normal float) (-87.3), exp, Sigmoid, SiLU and Softmax give 0, never a
// subnormal (Eigen's vectorised exp gave 2.9e-39 for exp(-inf) and exp(-100), and subnormals
// cost microcode assists in every later multiply); elsewhere they are the formula's values.
// 24 values a row, so that the vectorised loop (8 floats, 4 doubles a packet) sees them all.
TEST(ActivationOps, FarNegativeArgumentsGiveZeroNotSubnormals) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> x{-inf,   -1e30f, -1000, -150, -104,  -100, -90,  -88.5,
                               -87.5f, -86.5f, -80,   -40,  -9.5f, -9,   -3,   -0.5f,
                               0,      0.5f,   3,     20,   88,    90,   1000, inf};
    const auto n = static_cast<std::int64_t>(x.size());
    auto noSubnormal = [](const Tensor& t) {
        for (std::int64_t i = 0; i < t.numel(); ++i)
            if (std::fpclassify(t.data<float>()[i]) == FP_SUBNORMAL) return false;
        return true;
    };
    auto expected = [&](auto f) {
        std::vector<float> out;
        for (float v : x) out.push_back(v < -87.0f ? 0.0f : f(v));
        return makeTensor<float>({n}, out);
    };
    const Tensor e = runOneNodeTensor(node("Exp", {makeTensor<float>({n}, x)}));
    EXPECT_TRUE(noSubnormal(e));
    EXPECT_EQ(e.data<float>()[0], 0.0f);  // exp(-inf)
    EXPECT_TRUE(tensorsClose(e, expected([](float v) { return std::exp(v); }), {1e-6, 0}));
    const Tensor s = runOneNodeTensor(node("Sigmoid", {makeTensor<float>({n}, x)}));
    EXPECT_TRUE(noSubnormal(s));
    EXPECT_TRUE(tensorsClose(
        s, expected([](float v) { return static_cast<float>(1 / (1 + std::exp(-double{v}))); })));
    for (std::int64_t i = 0; i < n; ++i)
        if (x[static_cast<std::size_t>(i)] < -88.0f) {
            EXPECT_EQ(s.data<float>()[i], 0.0f) << i;
        }
    // Softmax over masked scores: the masked ones exactly 0.
    std::vector<float> scores(24, -inf);
    for (int i = 0; i < 24; i += 3) scores[static_cast<std::size_t>(i)] = 0.5f * i;
    scores[1] = -10000.0f;
    const Tensor p = runOneNodeTensor(node("Softmax", {makeTensor<float>({1, 24}, scores)}));
    EXPECT_TRUE(noSubnormal(p));
    for (int i = 0; i < 24; ++i)
        if (i % 3 != 0) {
            EXPECT_EQ(p.data<float>()[i], 0.0f) << i;
        }
    // Doubles below ln(the smallest normal double) (-708.4).
    const Tensor d = runOneNodeTensor(
        node("Exp", {makeTensor<double>({8}, {-std::numeric_limits<double>::infinity(), -1e4, -745,
                                              -720, -700, -1, 0, 1})}));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d.data<double>()[i], 0.0) << i;
    EXPECT_NEAR(d.data<double>()[4] / std::exp(-700.0), 1.0, 1e-12);
}

TEST(ActivationOps, ReluOnIntegersAndHalves) {
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Relu", {makeTensor<std::int32_t>({3}, {-3, 0, 5})})),
                     makeTensor<std::int32_t>({3}, {0, 0, 5})));
    Tensor h = makeTensor<engine::float16>({2}, {engine::float16(-1.5f), engine::float16(2.5f)});
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(node("Relu", {h})),
        makeTensor<engine::float16>({2}, {engine::float16(0.0f), engine::float16(2.5f)})));
}

TEST(ActivationOps, PReluBroadcastsSlopePerChannel) {
    // x [1,2,2], slope [2,1]: channel 0 slope 0.5, channel 1 slope 2.
    Tensor x = makeTensor<float>({1, 2, 2}, {-2, 3, -4, 5});
    Tensor slope = makeTensor<float>({2, 1}, {0.5f, 2.0f});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("PRelu", {x, slope})),
                             makeTensor<float>({1, 2, 2}, {-1, 3, -8, 5})));
    // Opset 6: a 1-D slope is per channel (dim 1) even where numpy would align it with the last
    // dim.
    Tensor x3 = makeTensor<float>({1, 2, 3}, {-1, -2, -3, -1, 2, -3});
    auto legacy = node("PRelu", {x3, makeTensor<float>({2}, {0.5f, 2.0f})}, 6);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(legacy),
                             makeTensor<float>({1, 2, 3}, {-0.5f, -1, -1.5f, -2, 2, -6})));
    auto bad = runOneNode(
        node("PRelu", {makeTensor<float>({2}, {1, 2}), makeTensor<float>({2, 2}, {1, 1, 1, 1})}));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("does not broadcast"), std::string::npos)
        << bad.error().message;
}

// Softmax of one row computed directly.
std::vector<float> softmaxRow(const std::vector<float>& row) {
    float mx = row[0];
    for (float v : row) mx = std::max(mx, v);
    float sum = 0;
    for (float v : row) sum += std::exp(v - mx);
    std::vector<float> out;
    for (float v : row) out.push_back(std::exp(v - mx) / sum);
    return out;
}

TEST(ActivationOps, SoftmaxAlongMiddleAxis) {
    // [2,3,2], axis 1: normalise over groups {x[b,0,k], x[b,1,k], x[b,2,k]}.
    std::vector<float> x{1, 2, 3, 4, 5, 6, -1, 0, 1, 3, 2, 2};
    std::vector<float> expected(12);
    for (int b = 0; b < 2; ++b)
        for (int k = 0; k < 2; ++k) {
            std::vector<float> group;
            for (int c = 0; c < 3; ++c)
                group.push_back(x[static_cast<std::size_t>(b * 6 + c * 2 + k)]);
            auto s = softmaxRow(group);
            for (int c = 0; c < 3; ++c)
                expected[static_cast<std::size_t>(b * 6 + c * 2 + k)] =
                    s[static_cast<std::size_t>(c)];
        }
    auto spec = node("Softmax", {makeTensor<float>({2, 3, 2}, x)}, 13,
                     [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{1}); });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({2, 3, 2}, expected)));

    // LogSoftmax is the log of it; negative axis -2 is the same axis.
    std::vector<float> logs;
    for (float v : expected) logs.push_back(std::log(v));
    auto logSpec = node("LogSoftmax", {makeTensor<float>({2, 3, 2}, x)}, 13,
                        [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{-2}); });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(logSpec), makeTensor<float>({2, 3, 2}, logs)));
}

TEST(ActivationOps, SoftmaxBeforeOpset13CoercesTo2D) {
    // Opset 11, axis 1 on [2,2,2]: each batch's 4 values form one row.
    std::vector<float> x{1, 2, 3, 4, 0, 0, 0, 1000};
    std::vector<float> expected = softmaxRow({1, 2, 3, 4});
    auto second = softmaxRow({0, 0, 0, 1000});
    expected.insert(expected.end(), second.begin(), second.end());
    auto spec = node("Softmax", {makeTensor<float>({2, 2, 2}, x)}, 11);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({2, 2, 2}, expected)));
}

TEST(ActivationOps, HardmaxPicksFirstMaximum) {
    // Opset 13 default axis -1; ties go to the first index.
    Tensor x = makeTensor<float>({2, 3}, {3, 3, 1, 0, 5, 5});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Hardmax", {x})),
                             makeTensor<float>({2, 3}, {1, 0, 0, 0, 1, 0})));
    // Axis 0: columns.
    auto axis0 =
        node("Hardmax", {x}, 13, [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{0}); });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(axis0), makeTensor<float>({2, 3}, {1, 0, 0, 0, 1, 1})));
    // Opset 11, axis 0: the whole tensor is one row.
    auto flat =
        node("Hardmax", {x}, 11, [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{0}); });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(flat), makeTensor<float>({2, 3}, {0, 0, 0, 0, 1, 0})));
}

TEST(ActivationOps, SoftmaxEdgeCases) {
    // Empty input, float16 input, and an axis out of range.
    auto empty = runOneNodeTensor(node("Softmax", {Tensor(DataType::Float, {0, 3})}));
    EXPECT_EQ(empty.shape(), (Shape{0, 3}));
    Tensor h = makeTensor<engine::float16>({2}, {engine::float16(0.0f), engine::float16(0.0f)});
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(node("Softmax", {h})),
        makeTensor<engine::float16>({2}, {engine::float16(0.5f), engine::float16(0.5f)})));
    auto bad = runOneNode(node("Softmax", {makeTensor<float>({2}, {1, 2})}, 13,
                               [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{3}); }));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("under_test"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
