// Optimizers of ai.onnx.preview.training: one update step of Adagrad, Momentum (standard and
// Nesterov) and Adam worked out by hand, several tensors per node, and malformed nodes.
#include <cmath>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

const std::string kTraining = "ai.onnx.preview.training";

OneNodeSpec optimizerSpec(const std::string& op, float rate, std::int64_t count,
                          std::vector<Tensor> tensors, int outputs,
                          std::function<void(onnx::NodeProto&)> attributes) {
    OneNodeSpec spec{
        op,      kTraining,
        1,       {Value(floats({}, {rate})), Value(makeTensor<std::int64_t>({}, {count}))},
        outputs, std::move(attributes)};
    for (auto& t : tensors) spec.inputs.push_back(Value(t));
    return spec;
}

TEST(TrainingOps, AdagradStep) {
    // r = 1 / (1 + 1 * 1) = 0.5; g = 0 * x + 3; h = 7 + 9 = 16; x = 2 - 0.5 * 3 / 4.
    auto spec =
        optimizerSpec("Adagrad", 1.0f, 1, {floats({1}, {2}), floats({1}, {3}), floats({1}, {7})}, 2,
                      [](onnx::NodeProto& node) {
                          setAttr(node, "decay_factor", 1.0f);
                          setAttr(node, "epsilon", 0.0f);
                      });
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({1}, {2 - 0.375f})));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), floats({1}, {16})));
}

void momentumAttributes(onnx::NodeProto& node, const std::string& mode) {
    setAttr(node, "alpha", 0.5f);
    setAttr(node, "beta", 0.25f);
    setAttr(node, "norm_coefficient", 0.0f);
    setAttr(node, "mode", mode);
}

TEST(TrainingOps, MomentumStandardAndNesterov) {
    // t > 0: v = 0.5 * 4 + 0.25 * 2 = 2.5.
    std::vector<Tensor> tensors{floats({1}, {10}), floats({1}, {2}), floats({1}, {4})};
    auto standard = runOneNode(optimizerSpec(
        "Momentum", 0.1f, 3, tensors, 2, [](auto& node) { momentumAttributes(node, "standard"); }));
    ASSERT_TRUE(standard) << standard.error().message;
    EXPECT_TRUE(tensorsClose(standard->at(0).tensor(), floats({1}, {10 - 0.25f})));
    EXPECT_TRUE(tensorsClose(standard->at(1).tensor(), floats({1}, {2.5f})));
    // Nesterov: x = 10 - 0.1 * (2 + 0.5 * 2.5).
    auto nesterov = runOneNode(optimizerSpec(
        "Momentum", 0.1f, 3, tensors, 2, [](auto& node) { momentumAttributes(node, "nesterov"); }));
    ASSERT_TRUE(nesterov) << nesterov.error().message;
    EXPECT_TRUE(tensorsClose(nesterov->at(0).tensor(), floats({1}, {10 - 0.325f})));
    // The first update (t = 0) uses the gradient with coefficient 1: v = 2 + 2.
    auto first = runOneNode(optimizerSpec(
        "Momentum", 0.1f, 0, tensors, 2, [](auto& node) { momentumAttributes(node, "standard"); }));
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_TRUE(tensorsClose(first->at(1).tensor(), floats({1}, {4})));
}

TEST(TrainingOps, AdamStepWithBiasCorrectionOverTwoTensors) {
    // Tensor 1: g = 1, v = 0.5 * 0 + 0.5 * 1 = 0.5, h = 0.5 * 0 + 0.5 * 1 = 0.5.
    // t = 1: r' = 1 * sqrt(1 - 0.5) / (1 - 0.5) = sqrt(2); x = 1 - sqrt(2) * 0.5 / sqrt(0.5) = 0.
    // Tensor 2 (g = 0, v = 0, h = 4 -> 2): x unchanged.
    auto spec = optimizerSpec(
        "Adam", 1.0f, 1,
        {floats({1}, {1}), floats({2}, {5, 6}), floats({1}, {1}), floats({2}, {0, 0}),
         floats({1}, {0}), floats({2}, {0, 0}), floats({1}, {0}), floats({2}, {4, 4})},
        6, [](onnx::NodeProto& node) {
            setAttr(node, "alpha", 0.5f);
            setAttr(node, "beta", 0.5f);
            setAttr(node, "epsilon", 0.0f);
        });
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({1}, {0})));
    EXPECT_TRUE(tensorsClose(result->at(1).tensor(), floats({2}, {5, 6})));
    EXPECT_TRUE(tensorsClose(result->at(2).tensor(), floats({1}, {0.5f})));
    EXPECT_TRUE(tensorsClose(result->at(4).tensor(), floats({1}, {0.5f})));
    EXPECT_TRUE(tensorsClose(result->at(5).tensor(), floats({2}, {2, 2})));
}

TEST(TrainingOps, MalformedNodesAreErrors) {
    // Adagrad needs groups of three tensors.
    auto wrongCount = runOneNode(
        optimizerSpec("Adagrad", 1.0f, 0, {floats({1}, {1}), floats({1}, {1})}, 2, nullptr));
    ASSERT_FALSE(wrongCount);
    EXPECT_NE(wrongCount.error().message.find("groups of 3"), std::string::npos)
        << wrongCount.error().message;
    auto wrongShape = runOneNode(
        optimizerSpec("Adagrad", 1.0f, 0,
                      {floats({2}, {1, 2}), floats({1}, {1}), floats({2}, {0, 0})}, 2, nullptr));
    ASSERT_FALSE(wrongShape);
    EXPECT_NE(wrongShape.error().message.find("shape"), std::string::npos);
    auto badMode = runOneNode(
        optimizerSpec("Momentum", 1.0f, 0, {floats({1}, {1}), floats({1}, {1}), floats({1}, {0})},
                      2, [](onnx::NodeProto& node) { momentumAttributes(node, "heavy-ball"); }));
    EXPECT_FALSE(badMode);
}

}  // namespace
}  // namespace onnxlens::testing
