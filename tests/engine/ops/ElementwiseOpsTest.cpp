// Elementwise kernels and the broadcasting plan, on small cases worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../../../engine/ops/Broadcast.h"
#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

using engine::ops::BroadcastPlan;

OneNodeSpec node(const std::string& op, std::vector<Value> inputs, int opset = 17,
                 std::function<void(onnx::NodeProto&)> attrs = {}) {
    OneNodeSpec spec{op, "", opset, std::move(inputs), 1, {}};
    spec.attributes = std::move(attrs);
    return spec;
}

std::string errorOf(const OneNodeSpec& spec) {
    auto result = runOneNode(spec);
    return result ? std::string() : result.error().message;
}

// Collects every span of a plan as (outOffset, count, offsets..., strides...).
std::vector<std::vector<std::int64_t>> spans(const BroadcastPlan& plan, std::int64_t begin,
                                             std::int64_t end, std::size_t inputs) {
    std::vector<std::vector<std::int64_t>> out;
    plan.forEachSpan(
        begin, end,
        [&](std::int64_t o, std::int64_t n, const std::int64_t* off, const std::int64_t* step) {
            std::vector<std::int64_t> s{o, n};
            for (std::size_t k = 0; k < inputs; ++k) s.push_back(off[k]);
            for (std::size_t k = 0; k < inputs; ++k) s.push_back(step[k]);
            out.push_back(s);
        });
    return out;
}

TEST(BroadcastPlan, SameShapesCollapseToOneRow) {
    Shape a{2, 3, 4}, b{2, 3, 4};
    BroadcastPlan plan{&a, &b};
    EXPECT_EQ(plan.outputShape(), (Shape{2, 3, 4}));
    EXPECT_EQ(plan.rowLength(), 24);
    EXPECT_EQ(spans(plan, 0, 24, 2), (std::vector<std::vector<std::int64_t>>{{0, 24, 0, 0, 1, 1}}));
}

TEST(BroadcastPlan, ScalarOperandHasStrideZero) {
    Shape a{5, 6}, s{};
    BroadcastPlan plan{&a, &s};
    EXPECT_EQ(spans(plan, 0, 30, 2), (std::vector<std::vector<std::int64_t>>{{0, 30, 0, 0, 1, 0}}));
}

TEST(BroadcastPlan, PerChannelOperandWalksRowsAndRepeats) {
    // [2,3,2] + [3,1]: rows of 2 along the last dim; b holds one value per row of a's middle dim.
    Shape a{2, 3, 2}, b{3, 1};
    BroadcastPlan plan{&a, &b};
    EXPECT_EQ(plan.rowLength(), 2);
    auto all = spans(plan, 0, 12, 2);
    ASSERT_EQ(all.size(), 6u);
    // Row r of a starts at 2r; b's offset is r mod 3 with stride 0.
    for (std::int64_t r = 0; r < 6; ++r)
        EXPECT_EQ(all[static_cast<std::size_t>(r)],
                  (std::vector<std::int64_t>{2 * r, 2, 2 * r, r % 3, 1, 0}));
}

TEST(BroadcastPlan, PartialRangeStartsMidRow) {
    // Output [2,3] from a [2,1] and b [3]: element 4 is row 1, column 1.
    Shape a{2, 1}, b{3};
    BroadcastPlan plan{&a, &b};
    auto part = spans(plan, 4, 6, 2);
    ASSERT_EQ(part.size(), 1u);
    EXPECT_EQ(part[0], (std::vector<std::int64_t>{4, 2, 1, 1, 0, 1}));
}

TEST(BroadcastPlan, ZeroSizeAndIncompatibleShapes) {
    Shape a{0, 3}, b{1, 3};
    BroadcastPlan plan{&a, &b};
    EXPECT_EQ(plan.outputShape(), (Shape{0, 3}));
    EXPECT_EQ(plan.numel(), 0);
    EXPECT_TRUE(spans(plan, 0, 0, 2).empty());
    Shape c{2, 3}, d{4};
    EXPECT_THROW((BroadcastPlan{&c, &d}), engine::EngineError);
}

TEST(ElementwiseOps, AddBroadcastsBothWays) {
    // [2,1] + [3] -> [2,3]: a[i] + b[j].
    auto y = runOneNodeTensor(
        node("Add", {makeTensor<float>({2, 1}, {10, 20}), makeTensor<float>({3}, {1, 2, 3})}));
    EXPECT_TRUE(tensorsClose(y, makeTensor<float>({2, 3}, {11, 12, 13, 21, 22, 23})));
}

TEST(ElementwiseOps, SubWithScalarOnEitherSide) {
    auto left = runOneNodeTensor(
        node("Sub", {Tensor::scalar<std::int32_t>(10), makeTensor<std::int32_t>({3}, {1, 2, 3})}));
    EXPECT_TRUE(tensorsClose(left, makeTensor<std::int32_t>({3}, {9, 8, 7})));
    auto right = runOneNodeTensor(
        node("Sub", {makeTensor<std::int32_t>({3}, {1, 2, 3}), Tensor::scalar<std::int32_t>(10)}));
    EXPECT_TRUE(tensorsClose(right, makeTensor<std::int32_t>({3}, {-9, -8, -7})));
}

TEST(ElementwiseOps, LargeBroadcastMatchesDirectComputationWithThreads) {
    // 64x1000 * 1000 over two threads: every element is a[i,j] * b[j].
    const std::int64_t rows = 64, cols = 1000;
    std::vector<float> a(static_cast<std::size_t>(rows * cols)), b(static_cast<std::size_t>(cols));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97) - 48.0f;
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j % 13) * 0.5f;
    std::vector<float> expected(a.size());
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
            expected[static_cast<std::size_t>(i * cols + j)] =
                a[static_cast<std::size_t>(i * cols + j)] * b[static_cast<std::size_t>(j)];
    auto result = runOneNode(
        node("Mul", {makeTensor<float>({rows, cols}, a), makeTensor<float>({cols}, b)}), 2);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), makeTensor<float>({rows, cols}, expected)));
}

TEST(ElementwiseOps, EmptyAndZeroSizeBroadcast) {
    auto y = runOneNodeTensor(
        node("Add", {Tensor(DataType::Float, {0, 4}), makeTensor<float>({1, 4}, {1, 2, 3, 4})}));
    EXPECT_EQ(y.shape(), (Shape{0, 4}));
}

TEST(ElementwiseOps, MismatchedShapesAndTypesAreErrors) {
    std::string message = errorOf(node(
        "Add", {makeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), makeTensor<float>({2}, {1, 2})}));
    EXPECT_NE(message.find("under_test"), std::string::npos) << message;
    EXPECT_NE(message.find("[2x3]"), std::string::npos) << message;
    message = errorOf(node("Add", {makeTensor<float>({1}, {1}), makeTensor<double>({1}, {1})}));
    EXPECT_NE(message.find("different element types"), std::string::npos) << message;
}

TEST(ElementwiseOps, IntegerDivisionTruncatesAndRejectsZero) {
    auto y = runOneNodeTensor(node(
        "Div", {makeTensor<std::int32_t>({4}, {7, -7, 7, std::numeric_limits<std::int32_t>::min()}),
                makeTensor<std::int32_t>({4}, {2, 2, -2, -1})}));
    // C++/numpy-trunc semantics: 3, -3, -3; INT_MIN / -1 wraps to INT_MIN instead of trapping.
    EXPECT_TRUE(tensorsClose(
        y, makeTensor<std::int32_t>({4}, {3, -3, -3, std::numeric_limits<std::int32_t>::min()})));
    std::string message = errorOf(node(
        "Div", {makeTensor<std::int64_t>({2}, {1, 2}), makeTensor<std::int64_t>({2}, {1, 0})}));
    EXPECT_NE(message.find("division by zero"), std::string::npos) << message;
}

TEST(ElementwiseOps, ModFollowsDivisorSignUnlessFmod) {
    Tensor a = makeTensor<std::int32_t>({4}, {7, -7, 7, -7});
    Tensor b = makeTensor<std::int32_t>({4}, {3, 3, -3, -3});
    // Python %: 1, 2, -2, -1. C fmod: 1, -1, 1, -1.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Mod", {a, b})),
                             makeTensor<std::int32_t>({4}, {1, 2, -2, -1})));
    auto fmod =
        node("Mod", {a, b}, 17, [](onnx::NodeProto& n) { setAttr(n, "fmod", std::int64_t{1}); });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(fmod), makeTensor<std::int32_t>({4}, {1, -1, 1, -1})));
    auto floats = node("Mod", {makeTensor<float>({2}, {5.5f, -5.5f}), Tensor::scalar<float>(2.0f)},
                       17, [](onnx::NodeProto& n) { setAttr(n, "fmod", std::int64_t{1}); });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(floats), makeTensor<float>({2}, {1.5f, -1.5f})));
}

TEST(ElementwiseOps, PowMixedTypes) {
    // int base, float exponent: truncated to int. float base, int exponent.
    auto a = runOneNodeTensor(node(
        "Pow", {makeTensor<std::int64_t>({3}, {2, 3, 4}), makeTensor<float>({3}, {3, 0.5f, -1})}));
    EXPECT_TRUE(tensorsClose(a, makeTensor<std::int64_t>({3}, {8, 1, 0})));
    auto b = runOneNodeTensor(node("Pow", {makeTensor<float>({3}, {2, -3, 0.5f}),
                                           makeTensor<std::int32_t>({3}, {10, 3, -2})}));
    EXPECT_TRUE(tensorsClose(b, makeTensor<float>({3}, {1024, -27, 4})));
    auto c = runOneNodeTensor(node("Pow", {makeTensor<std::int32_t>({3}, {3, -2, 5}),
                                           makeTensor<std::int32_t>({3}, {4, 3, 0})}));
    EXPECT_TRUE(tensorsClose(c, makeTensor<std::int32_t>({3}, {81, -8, 1})));
    // Scalar exponent fast paths: square and square root.
    auto sq =
        runOneNodeTensor(node("Pow", {makeTensor<float>({2}, {3, -4}), Tensor::scalar<float>(2)}));
    EXPECT_TRUE(tensorsClose(sq, makeTensor<float>({2}, {9, 16})));
    auto root = runOneNodeTensor(
        node("Pow", {makeTensor<double>({2}, {9, 2.25}), Tensor::scalar<double>(0.5)}));
    EXPECT_TRUE(tensorsClose(root, makeTensor<double>({2}, {3, 1.5})));
}

TEST(ElementwiseOps, BitShiftDropsBitsShiftedOut) {
    Tensor a = makeTensor<std::uint8_t>({3}, {0b10010110, 1, 255});
    Tensor s = makeTensor<std::uint8_t>({3}, {1, 7, 8});
    auto left = node("BitShift", {a, s}, 17,
                     [](onnx::NodeProto& n) { setAttr(n, "direction", std::string("LEFT")); });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(left), makeTensor<std::uint8_t>({3}, {0b00101100, 128, 0})));
    auto right = node("BitShift", {a, s}, 17,
                      [](onnx::NodeProto& n) { setAttr(n, "direction", std::string("RIGHT")); });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(right), makeTensor<std::uint8_t>({3}, {0b01001011, 0, 0})));
    auto bad = node("BitShift", {a, s}, 17,
                    [](onnx::NodeProto& n) { setAttr(n, "direction", std::string("UP")); });
    EXPECT_NE(errorOf(bad).find("LEFT or RIGHT"), std::string::npos);
}

TEST(ElementwiseOps, ComparisonsAndLogicGiveBool) {
    Tensor a = makeTensor<float>({3}, {1, 2, 3});
    Tensor b = makeTensor<float>({1}, {2});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Less", {a, b})),
                             makeTensor<bool>({3}, {true, false, false})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("GreaterOrEqual", {a, b})),
                             makeTensor<bool>({3}, {false, true, true})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Equal", {a, b})),
                             makeTensor<bool>({3}, {false, true, false})));
    Tensor s1 = makeTensor<std::string>({2}, {"ab", "cd"});
    Tensor s2 = makeTensor<std::string>({2}, {"ab", "ce"});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Equal", {s1, s2})),
                             makeTensor<bool>({2}, {true, false})));
    Tensor p = makeTensor<bool>({2, 2}, {true, true, false, false});
    Tensor q = makeTensor<bool>({2}, {true, false});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("And", {p, q})),
                             makeTensor<bool>({2, 2}, {true, false, false, false})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Or", {p, q})),
                             makeTensor<bool>({2, 2}, {true, true, true, false})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Xor", {p, q})),
                             makeTensor<bool>({2, 2}, {false, true, true, false})));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Not", {q})), makeTensor<bool>({2}, {false, true})));
    EXPECT_NE(errorOf(node("And", {a, a})).find("unsupported input type"), std::string::npos);
}

TEST(ElementwiseOps, LegacyBroadcastAlignsAtAxis) {
    // Opset 6 Add with broadcast=1, axis=0: B of shape [2] lines up with A's first dim.
    auto spec =
        node("Add", {makeTensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}), makeTensor<float>({2}, {1, 2})},
             6, [](onnx::NodeProto& n) {
                 setAttr(n, "broadcast", std::int64_t{1});
                 setAttr(n, "axis", std::int64_t{0});
             });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<float>({2, 3}, {1, 1, 1, 2, 2, 2})));
}

TEST(ElementwiseOps, UnaryMathOnFloatsAndHalves) {
    Tensor x = makeTensor<float>({4}, {-1.5f, 0.0f, 2.5f, 4.0f});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Abs", {x})),
                             makeTensor<float>({4}, {1.5f, 0, 2.5f, 4})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Neg", {x})),
                             makeTensor<float>({4}, {1.5f, 0, -2.5f, -4})));
    // Round halves to even: -1.5 -> -2, 2.5 -> 2.
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Round", {x})), makeTensor<float>({4}, {-2, 0, 2, 4})));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Floor", {x})), makeTensor<float>({4}, {-2, 0, 2, 4})));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Ceil", {x})), makeTensor<float>({4}, {-1, 0, 3, 4})));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Sign", {x})), makeTensor<float>({4}, {-1, 0, 1, 1})));
    Tensor e = makeTensor<double>({3}, {0.0, 1.0, -2.0});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Exp", {e})),
                             makeTensor<double>({3}, {1.0, std::exp(1.0), std::exp(-2.0)})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Erf", {e})),
                             makeTensor<double>({3}, {0.0, std::erf(1.0), std::erf(-2.0)})));
    // float16 goes through float blocks: 600 elements spans three blocks.
    std::vector<engine::float16> h(600);
    std::vector<engine::float16> expected(600);
    for (std::size_t i = 0; i < h.size(); ++i) {
        h[i] = engine::float16(static_cast<float>(i) / 100.0f);
        expected[i] = engine::float16(std::sqrt(static_cast<float>(h[i])));
    }
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Sqrt", {makeTensor<engine::float16>({600}, h)})),
                     makeTensor<engine::float16>({600}, expected)));
}

TEST(ElementwiseOps, IntegerAbsNegSign) {
    Tensor x = makeTensor<std::int8_t>({3}, {-128, -5, 7});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Abs", {x})),
                             makeTensor<std::int8_t>({3}, {-128, 5, 7})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Neg", {x})),
                             makeTensor<std::int8_t>({3}, {-128, 5, -7})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Sign", {x})),
                             makeTensor<std::int8_t>({3}, {-1, -1, 1})));
    EXPECT_NE(
        errorOf(node("Neg", {makeTensor<std::uint8_t>({1}, {1})})).find("unsupported input type"),
        std::string::npos);
}

TEST(ElementwiseOps, IsNaNAndIsInfDirections) {
    const float inf = std::numeric_limits<float>::infinity();
    Tensor x = makeTensor<float>({4}, {1.0f, std::nanf(""), inf, -inf});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("IsNaN", {x})),
                             makeTensor<bool>({4}, {false, true, false, false})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("IsInf", {x})),
                             makeTensor<bool>({4}, {false, false, true, true})));
    auto negativeOnly = node("IsInf", {x}, 17, [](onnx::NodeProto& n) {
        setAttr(n, "detect_positive", std::int64_t{0});
    });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(negativeOnly),
                             makeTensor<bool>({4}, {false, false, false, true})));
}

TEST(ElementwiseOps, VariadicBroadcastOverThreeInputs) {
    Tensor a = makeTensor<float>({2, 1}, {1, 6});
    Tensor b = makeTensor<float>({3}, {4, 2, 9});
    Tensor c = Tensor::scalar<float>(3);
    // Max of a[i], b[j], 3.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Max", {a, b, c})),
                             makeTensor<float>({2, 3}, {4, 3, 9, 6, 6, 9})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Min", {a, b, c})),
                             makeTensor<float>({2, 3}, {1, 1, 1, 3, 2, 3})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Sum", {a, b, c})),
                             makeTensor<float>({2, 3}, {8, 6, 13, 13, 11, 18})));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(node("Mean", {a, b, c})),
                     makeTensor<float>({2, 3}, {8.f / 3, 2, 13.f / 3, 13.f / 3, 11.f / 3, 6})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Sum", {a})), a));
    // NaN wins in Max, as in numpy.maximum.
    auto nan = runOneNodeTensor(node("Max", {makeTensor<float>({2}, {std::nanf(""), 1}),
                                             makeTensor<float>({2}, {0, std::nanf("")})}));
    EXPECT_TRUE(std::isnan(nan.data<float>()[0]) && std::isnan(nan.data<float>()[1]));
    auto ints = runOneNodeTensor(node("Max", {makeTensor<std::uint16_t>({2}, {1, 70}),
                                              makeTensor<std::uint16_t>({2}, {65535, 3})}));
    EXPECT_TRUE(tensorsClose(ints, makeTensor<std::uint16_t>({2}, {65535, 70})));
}

TEST(ElementwiseOps, WhereBroadcastsConditionAndStrings) {
    Tensor cond = makeTensor<bool>({2, 1}, {true, false});
    Tensor x = makeTensor<std::string>({2}, {"a", "b"});
    Tensor y = makeTensor<std::string>({1}, {"z"});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Where", {cond, x, y})),
                             makeTensor<std::string>({2, 2}, {"a", "b", "z", "z"})));
    EXPECT_NE(
        errorOf(node("Where", {makeTensor<float>({1}, {1}), x, y})).find("condition must be bool"),
        std::string::npos);
}

TEST(ElementwiseOps, ClipAttributeAndInputForms) {
    Tensor x = makeTensor<float>({4}, {-3, -1, 1, 3});
    auto old = node("Clip", {x}, 6, [](onnx::NodeProto& n) {
        setAttr(n, "min", -2.0f);
        setAttr(n, "max", 2.0f);
    });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(old), makeTensor<float>({4}, {-2, -1, 1, 2})));
    // Opset 13: only max given (min absent).
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Clip", {x, Value(), Tensor::scalar<float>(0)})),
                             makeTensor<float>({4}, {-3, -1, 0, 0})));
    // min > max: everything becomes max.
    EXPECT_TRUE(tensorsClose(
        runOneNodeTensor(node("Clip", {x, Tensor::scalar<float>(5), Tensor::scalar<float>(1)})),
        makeTensor<float>({4}, {1, 1, 1, 1})));
    Tensor i8 = makeTensor<std::int8_t>({3}, {-128, 0, 127});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(node("Clip", {i8, Tensor::scalar<std::int8_t>(-5)})),
                             makeTensor<std::int8_t>({3}, {-5, 0, 127})));
    EXPECT_NE(errorOf(node("Clip", {x, makeTensor<float>({2}, {0, 1})})).find("must be a scalar"),
              std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
