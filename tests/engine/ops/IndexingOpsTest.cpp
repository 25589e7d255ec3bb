// Edge cases of the indexing kernels beyond the ONNX backend data: negative and out-of-range
// indices (a clear error naming the index and the axis size, never a crash), empty tensors,
// ties, strings, reductions. Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "DataMovementTestHelpers.h"

namespace onnxlens::testing {
namespace {

using namespace data_movement;

std::function<void(onnx::NodeProto&)> axisAttr(std::int64_t axis) {
    return [axis](onnx::NodeProto& n) { setAttr(n, "axis", axis); };
}

// An out-of-range index must be reported with its value, and the axis size, by the node.
void expectIndexError(const OneNodeSpec& spec, const std::string& index, const std::string& size) {
    const std::string e = errorOf(spec);
    EXPECT_NE(e.find("under_test"), std::string::npos) << e;
    EXPECT_NE(e.find("index " + index), std::string::npos) << e;
    EXPECT_NE(e.find("size " + size), std::string::npos) << e;
}

// ---------------------------------------------------------------------------------------------

TEST(IndexingOps, GatherNegativeScalarAndEmptyIndices) {
    Value data = ints({3, 2}, {1, 2, 3, 4, 5, 6});
    Tensor t = runOneNodeTensor(node("Gather", {data, ints({2}, {-1, 0})}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({5, 6, 1, 2}));
    t = runOneNodeTensor(node("Gather", {data, ints({}, {-1})}, axisAttr(-1)));
    EXPECT_EQ(t.shape(), Shape({3}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({2, 4, 6}));
    t = runOneNodeTensor(node("Gather", {data, ints({0, 2}, {})}));
    EXPECT_EQ(t.shape(), Shape({0, 2, 2}));
    Value idx32(makeTensor<std::int32_t>({1}, {1}));
    t = runOneNodeTensor(node("Gather", {strings({2}, {"a", "b"}), idx32}));
    EXPECT_EQ(valuesOf<std::string>(t), S({"b"}));
}

TEST(IndexingOps, GatherOutOfRangeIsAnError) {
    Value data = ints({3, 2}, {1, 2, 3, 4, 5, 6});
    expectIndexError(node("Gather", {data, ints({2}, {0, 3})}), "3", "3");
    expectIndexError(node("Gather", {data, ints({1}, {-3})}, axisAttr(1)), "-3", "2");
    expectIndexError(node("Gather", {data, ints({1}, {std::numeric_limits<std::int64_t>::min()})}),
                     std::to_string(std::numeric_limits<std::int64_t>::min()), "3");
}

TEST(IndexingOps, GatherElementsAlongNegativeAxis) {
    Tensor t = runOneNodeTensor(
        node("GatherElements", {ints({2, 3}, {1, 2, 3, 4, 5, 6}), ints({2, 2}, {2, -3, 0, 1})},
             axisAttr(-1)));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({3, 1, 4, 5}));
    expectIndexError(node("GatherElements", {ints({2, 3}, {1, 2, 3, 4, 5, 6}), ints({1, 1}, {2})}),
                     "2", "2");
}

TEST(IndexingOps, GatherNDWithBatchDimsAndNegativeIndices) {
    // data [2, 2, 2]; batch_dims 1: each batch picks a row with a 1-tuple.
    Value data = ints({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    Tensor t = runOneNodeTensor(node("GatherND", {data, ints({2, 1}, {-1, 0})},
                                     [](auto& n) { setAttr(n, "batch_dims", std::int64_t{1}); }));
    EXPECT_EQ(t.shape(), Shape({2, 2}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({2, 3, 4, 5}));
    t = runOneNodeTensor(node("GatherND", {data, ints({2, 3}, {1, 0, 1, 0, 1, 0})}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({5, 2}));
    expectIndexError(node("GatherND", {data, ints({1, 2}, {0, 2})}), "2", "2");
}

TEST(IndexingOps, ScatterElementsReductionsAndDuplicates) {
    Value data = floats({1, 4}, {1, 2, 3, 4});
    Value indices = ints({1, 3}, {1, -1, 1});
    Value updates = floats({1, 3}, {10, 20, 30});
    auto scatter = [&](std::string reduction, int opset) {
        return valuesOf<float>(runOneNodeTensor(node(
            "ScatterElements", {data, indices, updates},
            [=](auto& n) {
                setAttr(n, "axis", std::int64_t{1});
                if (!reduction.empty()) setAttr(n, "reduction", reduction);
            },
            opset)));
    };
    EXPECT_EQ(scatter("", 13), F({1, 30, 3, 20}));  // later duplicates win
    EXPECT_EQ(scatter("add", 16), F({1, 42, 3, 24}));
    EXPECT_EQ(scatter("mul", 16), F({1, 600, 3, 80}));
    EXPECT_EQ(scatter("max", 18), F({1, 30, 3, 20}));
    EXPECT_EQ(scatter("min", 18), F({1, 2, 3, 4}));
    expectIndexError(
        node("ScatterElements", {data, ints({1, 1}, {4}), floats({1, 1}, {0})}, axisAttr(1)), "4",
        "4");
    // The deprecated Scatter is the same operation.
    Tensor t = runOneNodeTensor(node(
        "Scatter", {strings({3}, {"a", "b", "c"}), ints({1}, {0}), strings({1}, {"z"})}, {}, 10));
    EXPECT_EQ(valuesOf<std::string>(t), S({"z", "b", "c"}));
}

TEST(IndexingOps, ScatterNDSlicesAndReductions) {
    Value data = ints({2, 2}, {1, 2, 3, 4});
    Tensor t =
        runOneNodeTensor(node("ScatterND", {data, ints({1, 1}, {-1}), ints({1, 2}, {8, 9})}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({1, 2, 8, 9}));
    t = runOneNodeTensor(node(
        "ScatterND", {data, ints({2, 2}, {0, 1, 0, 1}), ints({2}, {5, 6})},
        [](auto& n) { setAttr(n, "reduction", std::string("add")); }, 16));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({1, 13, 3, 4}));
    expectIndexError(node("ScatterND", {data, ints({1, 2}, {0, -3}), ints({1}, {0})}), "-3", "2");
    EXPECT_NE(errorOf(node("ScatterND", {data, ints({1, 1}, {0}), ints({1, 3}, {0, 0, 0})}))
                  .find("updates"),
              std::string::npos);
}

TEST(IndexingOps, OneHotOutOfRangeRowsStayOff) {
    Tensor t = runOneNodeTensor(node(
        "OneHot", {floats({3}, {1.7f, -1, 5}), ints({}, {3}), ints({2}, {0, 7})}, axisAttr(0)));
    EXPECT_EQ(t.shape(), Shape({3, 3}));
    // Columns are the indices: 1.7 -> 1, -1 -> 2, 5 -> none.
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({0, 0, 0, 7, 0, 0, 0, 7, 0}));
    EXPECT_NE(
        errorOf(node("OneHot", {ints({1}, {0}), ints({}, {0}), ints({2}, {0, 1})})).find("depth"),
        std::string::npos);
}

TEST(IndexingOps, CompressWithAndWithoutAxis) {
    Value data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
    Value cond(makeTensor<bool>({2}, {false, true}));
    EXPECT_EQ(valuesOf<std::int64_t>(runOneNodeTensor(node("Compress", {data, cond}))), I({2}));
    Tensor t = runOneNodeTensor(node("Compress", {data, cond}, axisAttr(-1)));
    EXPECT_EQ(t.shape(), Shape({2, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({2, 5}));
    Value tooLong(makeTensor<bool>({4}, {false, false, false, true}));
    expectIndexError(node("Compress", {data, tooLong}, axisAttr(1)), "3", "3");
}

TEST(IndexingOps, NonZeroCoordinates) {
    Value flags(makeTensor<bool>({2, 2}, {false, true, true, true}));
    Tensor t = runOneNodeTensor(node("NonZero", {flags}));
    EXPECT_EQ(t.shape(), Shape({2, 3}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({0, 1, 1, 1, 0, 1}));
    EXPECT_EQ(runOneNodeTensor(node("NonZero", {floats({3}, {0, 0, 0})})).shape(), Shape({1, 0}));
    EXPECT_EQ(runOneNodeTensor(node("NonZero", {floats({}, {2})})).shape(), Shape({1, 1}));
}

TEST(IndexingOps, UniqueStringsSortedAndInOrderOfAppearance) {
    Value words = strings({5}, {"b", "a", "b", "c", "a"});
    auto result = runOneNode(node("Unique", {words}, {}, 11, 4));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<std::string>(result->at(0).tensor()), S({"a", "b", "c"}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(1).tensor()), I({1, 0, 3}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(2).tensor()), I({1, 0, 1, 2, 0}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(3).tensor()), I({2, 2, 1}));
    result = runOneNode(node(
        "Unique", {words}, [](auto& n) { setAttr(n, "sorted", std::int64_t{0}); }, 11, 4));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<std::string>(result->at(0).tensor()), S({"b", "a", "c"}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(1).tensor()), I({0, 1, 3}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(2).tensor()), I({0, 1, 0, 2, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(3).tensor()), I({2, 2, 1}));
}

TEST(IndexingOps, UniqueColumnsAndEmptyInput) {
    // Columns (axis 1) of [[1, 0, 1], [2, 5, 2]]: (1,2), (0,5), (1,2).
    auto result =
        runOneNode(node("Unique", {ints({2, 3}, {1, 0, 1, 2, 5, 2})}, axisAttr(1), 11, 4));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->at(0).tensor().shape(), Shape({2, 2}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(0).tensor()), I({0, 1, 5, 2}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(2).tensor()), I({1, 0, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(3).tensor()), I({1, 2}));
    result = runOneNode(node("Unique", {floats({0}, {})}, {}, 11, 4));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->at(0).tensor().shape(), Shape({0}));
}

TEST(IndexingOps, TopKTiesPreferTheLowerIndex) {
    Value x = floats({2, 4}, {3, 1, 3, 2, 0, 0, 5, 0});
    auto result = runOneNode(node("TopK", {x, ints({1}, {2})}, {}, 11, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(0).tensor()), F({3, 3, 5, 0}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(1).tensor()), I({0, 2, 2, 0}));
    result = runOneNode(node(
        "TopK", {x, ints({1}, {3})},
        [](auto& n) {
            setAttr(n, "largest", std::int64_t{0});
            setAttr(n, "axis", std::int64_t{-1});
        },
        11, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(0).tensor()), F({1, 2, 3, 0, 0, 0}));
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(1).tensor()), I({1, 3, 0, 0, 1, 3}));
    // NaN ranks above every number.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    result = runOneNode(node("TopK", {floats({3}, {1, nan, 2}), ints({1}, {1})}, {}, 11, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<std::int64_t>(result->at(1).tensor()), I({1}));
    // k = 0 gives empty outputs; k beyond the axis is an error.
    result = runOneNode(node("TopK", {x, ints({1}, {0})}, {}, 11, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->at(0).tensor().shape(), Shape({2, 0}));
    EXPECT_NE(errorOf(node("TopK", {x, ints({1}, {5})}, {}, 11, 2)).find("k = 5"),
              std::string::npos);
    // Opset 1 takes k as an attribute.
    result = runOneNode(node(
        "TopK", {x}, [](auto& n) { setAttr(n, "k", std::int64_t{1}); }, 1, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(0).tensor()), F({3, 5}));
}

TEST(IndexingOps, ArgMaxArgMinTiesKeepdimsAndEmptyAxis) {
    Value x = ints({2, 3}, {4, 9, 9, 1, 1, 0});
    auto arg = [&](std::string op, std::int64_t axis, std::int64_t keepdims, std::int64_t last) {
        return runOneNodeTensor(node(op, {x}, [=](auto& n) {
            setAttr(n, "axis", axis);
            setAttr(n, "keepdims", keepdims);
            setAttr(n, "select_last_index", last);
        }));
    };
    Tensor t = arg("ArgMax", -1, 1, 0);
    EXPECT_EQ(t.shape(), Shape({2, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({1, 0}));
    t = arg("ArgMax", 1, 0, 1);
    EXPECT_EQ(t.shape(), Shape({2}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({2, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(arg("ArgMin", 0, 0, 0)), I({1, 1, 1}));
    EXPECT_EQ(valuesOf<std::int64_t>(arg("ArgMin", 1, 0, 1)), I({0, 2}));
    EXPECT_NE(errorOf(node("ArgMax", {floats({2, 0}, {})}, axisAttr(1))).find("empty"),
              std::string::npos);
}

TEST(IndexingOps, CumSumDirectionsOnIntegers) {
    Value x = ints({2, 3}, {1, 2, 3, 4, 5, 6});
    auto cumsum = [&](std::int64_t axis, std::int64_t exclusive, std::int64_t reverse) {
        return valuesOf<std::int64_t>(
            runOneNodeTensor(node("CumSum", {x, ints({}, {axis})}, [=](auto& n) {
                setAttr(n, "exclusive", exclusive);
                setAttr(n, "reverse", reverse);
            })));
    };
    EXPECT_EQ(cumsum(-1, 0, 0), I({1, 3, 6, 4, 9, 15}));
    EXPECT_EQ(cumsum(1, 1, 1), I({5, 3, 0, 11, 6, 0}));
    EXPECT_EQ(cumsum(0, 1, 0), I({0, 0, 0, 1, 2, 3}));
    EXPECT_NE(errorOf(node("CumSum", {x, ints({}, {2})})).find("out of range"), std::string::npos);
}

TEST(IndexingOps, ReverseSequenceBatchMajorAndLengthChecks) {
    // batch_axis 0: rows are batch entries, columns time steps.
    Value x = ints({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    auto attrs = [](onnx::NodeProto& n) {
        setAttr(n, "batch_axis", std::int64_t{0});
        setAttr(n, "time_axis", std::int64_t{1});
    };
    Tensor t = runOneNodeTensor(node("ReverseSequence", {x, ints({2}, {3, 0})}, attrs));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({3, 2, 1, 4, 5, 6, 7, 8}));
    EXPECT_NE(
        errorOf(node("ReverseSequence", {x, ints({2}, {5, 1})}, attrs)).find("sequence length 5"),
        std::string::npos);
}

TEST(IndexingOps, ExtremeDepthsAndIndicesFailCleanly) {
    EXPECT_NE(errorOf(node("OneHot", {ints({1}, {0}), floats({}, {1e30f}), ints({2}, {0, 1})}))
                  .find("depth"),
              std::string::npos);
    EXPECT_FALSE(errorOf(node("OneHot",
                              {ints({1}, {0}), ints({}, {std::numeric_limits<std::int64_t>::max()}),
                               ints({2}, {0, 1})}))
                     .empty());
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    EXPECT_NE(errorOf(node("GatherElements", {ints({2}, {1, 2}), ints({1}, {max})})).find("index"),
              std::string::npos);
    EXPECT_NE(errorOf(node("ScatterND", {ints({2}, {1, 2}), ints({1, 1}, {-max}), ints({1}, {0})}))
                  .find("index"),
              std::string::npos);
}

TEST(IndexingOps, TensorScatterWritesEachBatchEntryAtItsIndex) {
    // Cache (batch 2, heads 1, max_seq 4, head_dim 2) = 0..15; update (2, 1, 2, 2) = -1..-8.
    std::vector<float> pastValues(16), updateValues(8);
    for (int i = 0; i < 16; ++i) pastValues[i] = static_cast<float>(i);
    for (int i = 0; i < 8; ++i) updateValues[i] = static_cast<float>(-1 - i);
    Tensor past = makeTensor<float>({2, 1, 4, 2}, pastValues);
    Tensor update = makeTensor<float>({2, 1, 2, 2}, updateValues);
    auto scatter = [&](std::string mode, std::vector<std::int64_t> indices) {
        OneNodeSpec spec{
            "TensorScatter", "", 24, {past, update, makeTensor<std::int64_t>({2}, indices)}};
        spec.attributes = [mode](onnx::NodeProto& n) { setAttr(n, "mode", mode); };
        return runOneNode(spec);
    };
    // Circular: batch 0 from 1 writes positions 1, 2; batch 1 from 3 writes 3, then wraps to 0.
    auto circular = scatter("circular", {1, 3});
    ASSERT_TRUE(circular) << circular.error().message;
    EXPECT_TRUE(tensorsClose(circular->at(0).tensor(),
                             makeTensor<float>({2, 1, 4, 2}, {0, 1, -1, -2, -3, -4, 6, 7,  //
                                                              -7, -8, 10, 11, 12, 13, -5, -6})));
    // Linear from 0 and 2 fits; from 3 it does not, and the error says so.
    auto linear = scatter("linear", {0, 2});
    ASSERT_TRUE(linear) << linear.error().message;
    EXPECT_TRUE(tensorsClose(linear->at(0).tensor(),
                             makeTensor<float>({2, 1, 4, 2}, {-1, -2, -3, -4, 4, 5, 6, 7,  //
                                                              8, 9, 10, 11, -5, -6, -7, -8})));
    auto overflow = scatter("linear", {0, 3});
    ASSERT_FALSE(overflow);
    EXPECT_NE(overflow.error().message.find("write index 3"), std::string::npos)
        << overflow.error().message;
    // Without write_indices every entry writes from 0; the past cache itself is not changed.
    OneNodeSpec noIndices{"TensorScatter", "", 24, {past, update}};
    Tensor fromZero = runOneNodeTensor(noIndices);
    EXPECT_EQ(fromZero.data<float>()[8], -5);
    EXPECT_EQ(past.data<float>()[0], 0);
}

}  // namespace
}  // namespace onnxlens::testing
