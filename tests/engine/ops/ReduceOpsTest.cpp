// Reduce* kernels: axes as attribute and as input, keepdims, noop_with_empty_axes, negative and
// non-adjacent axes, empty reductions (identity elements) and errors.
#include <cmath>
#include <limits>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

// Reduce op at opset 13: axes as an attribute for everything but ReduceSum (an input there).
OneNodeSpec reduceSpec(const std::string& op, Tensor x, std::vector<std::int64_t> axes,
                       std::int64_t keepdims = 1, int opset = 13) {
    OneNodeSpec spec = nodeSpec(op, opset, {Value(x)});
    bool axesInput = op == "ReduceSum" ? opset >= 13 : opset >= 18;
    if (axesInput)
        spec.inputs.push_back(
            Value(makeTensor<std::int64_t>({static_cast<std::int64_t>(axes.size())}, axes)));
    spec.attributes = [=](onnx::NodeProto& node) {
        setAttr(node, "keepdims", keepdims);
        if (!axesInput && !axes.empty()) setAttr(node, "axes", axes);
    };
    return spec;
}

const Tensor kMatrix = makeTensor<float>({2, 3}, {1, -2, 3, 4, 5, -6});

TEST(ReduceOps, SumOverNegativeAxisKeepsDims) {
    Tensor y = runOneNodeTensor(reduceSpec("ReduceSum", kMatrix, {-1}));
    EXPECT_TRUE(tensorsClose(y, floats({2, 1}, {2, 3})));
}

TEST(ReduceOps, SumWithAxesAttributeBeforeOpset13) {
    Tensor y = runOneNodeTensor(reduceSpec("ReduceSum", kMatrix, {0}, 0, 11));
    EXPECT_TRUE(tensorsClose(y, floats({3}, {5, 3, -3})));
}

TEST(ReduceOps, AxesAsInputFromOpset18) {
    Tensor y = runOneNodeTensor(reduceSpec("ReduceMax", kMatrix, {1}, 0, 18));
    EXPECT_TRUE(tensorsClose(y, floats({2}, {3, 5})));
}

TEST(ReduceOps, EmptyAxesReduceEverythingUnlessNoop) {
    OneNodeSpec all =
        nodeSpec("ReduceSum", 13, {Value(kMatrix), Value(makeTensor<std::int64_t>({0}, {}))});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(all), floats({1, 1}, {5})));

    OneNodeSpec noop = all;
    noop.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "noop_with_empty_axes", std::int64_t{1});
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(noop), kMatrix));
}

TEST(ReduceOps, EveryKindOverRows) {
    struct Case {
        const char* op;
        std::vector<float> expected;
    };
    // Rows {1, -2, 3} and {4, 5, -6}.
    std::vector<Case> cases = {
        {"ReduceMean", {2.0f / 3, 1}},
        {"ReduceMin", {-2, -6}},
        {"ReduceProd", {-6, -120}},
        {"ReduceL1", {6, 15}},
        {"ReduceL2", {std::sqrt(14.0f), std::sqrt(77.0f)}},
        {"ReduceSumSquare", {14, 77}},
        {"ReduceLogSumExp",
         {std::log(std::exp(1.0f) + std::exp(-2.0f) + std::exp(3.0f)),
          std::log(std::exp(4.0f) + std::exp(5.0f) + std::exp(-6.0f))}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.op);
        Tensor y = runOneNodeTensor(reduceSpec(c.op, kMatrix, {1}, 0));
        EXPECT_TRUE(tensorsClose(y, floats({2}, c.expected)));
    }
    Tensor positive = floats({2, 2}, {1, 2, 3, 4});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceLogSum", positive, {1}, 0)),
                             floats({2}, {std::log(3.0f), std::log(7.0f)})));
}

TEST(ReduceOps, NonAdjacentAxes) {
    // x[i][j][k] = 100 i + 10 j + k over [2, 3, 2]; reducing axes 0 and 2 leaves j.
    std::vector<float> values;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 2; ++k) values.push_back(100.0f * i + 10.0f * j + k);
    Tensor y = runOneNodeTensor(reduceSpec("ReduceSum", floats({2, 3, 2}, values), {0, 2}, 0));
    // For each j: (0 + 100) * 2 + 10 j * 4 + (0 + 1) * 2.
    EXPECT_TRUE(tensorsClose(y, floats({3}, {202, 242, 282})));
}

TEST(ReduceOps, ZeroSizeReductionGivesIdentity) {
    Tensor empty = floats({2, 0}, {});
    float inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceSum", empty, {1}, 0)),
                             floats({2}, {0, 0})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceProd", empty, {1}, 0)),
                             floats({2}, {1, 1})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceMax", empty, {1}, 0)),
                             floats({2}, {-inf, -inf})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceMin", empty, {1}, 0)),
                             floats({2}, {inf, inf})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(reduceSpec("ReduceLogSumExp", empty, {1}, 0)),
                             floats({2}, {-inf, -inf})));
    Tensor ints = makeTensor<std::int32_t>({0, 3}, {});
    Tensor y = runOneNodeTensor(reduceSpec("ReduceMin", ints, {0}, 1));
    EXPECT_EQ(y.shape(), (Shape{1, 3}));
    for (std::int32_t v : y.span<std::int32_t>())
        EXPECT_EQ(v, std::numeric_limits<std::int32_t>::max());
    // Keeping the empty axis and reducing another one yields an empty tensor.
    EXPECT_EQ(runOneNodeTensor(reduceSpec("ReduceSum", empty, {0}, 1)).shape(), (Shape{1, 0}));
}

TEST(ReduceOps, LogSumExpIsStableForLargeValues) {
    Tensor y = runOneNodeTensor(reduceSpec("ReduceLogSumExp", floats({2}, {1000, 1000}), {0}, 0));
    EXPECT_TRUE(tensorsClose(y, floats({}, {1000.0f + std::log(2.0f)})));
}

TEST(ReduceOps, Int64SumIsExact) {
    std::int64_t big = (std::int64_t{1} << 53) + 1;
    Tensor x = makeTensor<std::int64_t>({2}, {big, 1});
    Tensor y = runOneNodeTensor(reduceSpec("ReduceSum", x, {0}, 0));
    EXPECT_EQ(y.data<std::int64_t>()[0], big + 1);
}

TEST(ReduceOps, ParallelReductionMatchesSerialSum) {
    const std::int64_t rows = 512, cols = 300;
    std::vector<float> values(rows * cols);
    std::vector<float> expected(rows, 0.0f);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
            float v = static_cast<float>((r * 7 + c * 3) % 11) - 5.0f;
            values[r * cols + c] = v;
            expected[r] += v;
        }
    auto result = runOneNode(reduceSpec("ReduceSum", floats({rows, cols}, values), {1}, 0), 2);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({rows}, expected)));
}

TEST(ReduceOps, RepeatedAxisIsAnError) {
    auto result = runOneNode(reduceSpec("ReduceMean", kMatrix, {1, -1}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("repeated"), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().message.find("under_test"), std::string::npos);
}

TEST(ReduceOps, AxisOutOfRangeIsAnError) {
    auto result = runOneNode(reduceSpec("ReduceSum", kMatrix, {2}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("out of range"), std::string::npos)
        << result.error().message;
}

}  // namespace
}  // namespace onnxlens::testing
