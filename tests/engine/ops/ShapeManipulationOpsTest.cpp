// Edge cases of the shape-manipulation kernels beyond the ONNX backend data: negative axes,
// empty tensors, zero-size dims, every element width (strings included), legacy opsets and
// bad inputs that must fail with a clear error. Expected values are computed here by hand or
// by straightforward index arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "DataMovementTestHelpers.h"

namespace onnxlens::testing {
namespace {

using namespace data_movement;

// ---------------------------------------------------------------------------------------------

TEST(ShapeManipulationOps, IdentityPassesSequencesThrough) {
    auto seq = Value::sequence({makeTensor<float>({2}, {1, 2}), makeTensor<float>({1}, {3})},
                               DataType::Float);
    auto result = runOneNode(node("Identity", {seq}));
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_TRUE(result->at(0).isSequence());
    ASSERT_EQ(result->at(0).sequence().size(), 2u);
    EXPECT_EQ(valuesOf<float>(result->at(0).sequence()[1]), F({3}));
}

TEST(ShapeManipulationOps, ConstantFromEveryValueAttribute) {
    Tensor t = runOneNodeTensor(node("Constant", {}, [](auto& n) {
        setAttr(n, "value_ints", I{4, -5});
    }));
    EXPECT_EQ(t.shape(), Shape({2}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({4, -5}));
    t = runOneNodeTensor(node("Constant", {}, [](auto& n) { setAttr(n, "value_float", 2.5f); }));
    EXPECT_EQ(t.shape(), Shape({}));
    EXPECT_EQ(valuesOf<float>(t), F({2.5f}));
    t = runOneNodeTensor(
        node("Constant", {}, [](auto& n) { setAttr(n, "value_string", std::string("hi")); }));
    EXPECT_EQ(valuesOf<std::string>(t), S({"hi"}));
    t = runOneNodeTensor(node("Constant", {}, [](auto& n) {
        setAttr(n, "value", makeTensor<std::int32_t>({2, 1}, {7, 8}));
    }));
    EXPECT_EQ(t.dtype(), DataType::Int32);
    EXPECT_EQ(valuesOf<std::int32_t>(t), std::vector<std::int32_t>({7, 8}));
}

TEST(ShapeManipulationOps, ConstantWithoutValueFailsAtCompile) {
    EXPECT_NE(errorOf(node("Constant", {})).find("value"), std::string::npos);
    auto sparse = [](onnx::NodeProto& n) {
        auto* a = n.add_attribute();
        a->set_name("sparse_value");
        a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
    };
    EXPECT_NE(errorOf(node("Constant", {}, sparse)).find("sparse"), std::string::npos);
}

TEST(ShapeManipulationOps, ConstantOfShapeScalarsAndEmptyShapes) {
    auto withValue = [](onnx::NodeProto& n) {
        setAttr(n, "value", makeTensor<std::int32_t>({1}, {9}));
    };
    Tensor t = runOneNodeTensor(node("ConstantOfShape", {ints({0}, {})}, withValue));
    EXPECT_EQ(t.shape(), Shape({}));
    EXPECT_EQ(valuesOf<std::int32_t>(t), std::vector<std::int32_t>({9}));
    t = runOneNodeTensor(node("ConstantOfShape", {ints({2}, {2, 0})}));
    EXPECT_EQ(t.dtype(), DataType::Float);
    EXPECT_EQ(t.shape(), Shape({2, 0}));
    EXPECT_NE(errorOf(node("ConstantOfShape", {ints({2}, {2, -1})})).find("negative"),
              std::string::npos);
}

TEST(ShapeManipulationOps, ShapeStartEndClampAndCountFromTheEnd) {
    auto shapeOf = [](std::int64_t start, std::int64_t end) {
        return valuesOf<std::int64_t>(runOneNodeTensor(node(
            "Shape", {iota({2, 3, 4, 5})},
            [=](auto& n) {
                setAttr(n, "start", start);
                setAttr(n, "end", end);
            },
            15)));
    };
    EXPECT_EQ(shapeOf(-3, -1), I({3, 4}));
    EXPECT_EQ(shapeOf(-100, 100), I({2, 3, 4, 5}));
    EXPECT_EQ(shapeOf(3, 1), I({}));
}

TEST(ShapeManipulationOps, SizeOfAnEmptyTensorIsZero) {
    Tensor t = runOneNodeTensor(node("Size", {iota({3, 0, 2})}));
    EXPECT_EQ(t.shape(), Shape({}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({0}));
}

TEST(ShapeManipulationOps, ReshapeCopiesZeroAndInfersMinusOne) {
    Tensor t = runOneNodeTensor(node("Reshape", {iota({2, 3, 4}), ints({3}, {0, -1, 2})}));
    EXPECT_EQ(t.shape(), Shape({2, 6, 2}));
    EXPECT_EQ(valuesOf<float>(t)[23], 23.0f);
    // allowzero keeps a literal 0: only valid for an empty input.
    t = runOneNodeTensor(node(
        "Reshape", {iota({0, 3}), ints({2}, {3, 0})},
        [](auto& n) { setAttr(n, "allowzero", std::int64_t{1}); }, 14));
    EXPECT_EQ(t.shape(), Shape({3, 0}));
    // Strings reshape like any other type.
    t = runOneNodeTensor(node("Reshape", {strings({2, 2}, {"a", "b", "c", "d"}), ints({1}, {-1})}));
    EXPECT_EQ(valuesOf<std::string>(t), S({"a", "b", "c", "d"}));
}

TEST(ShapeManipulationOps, ReshapeLegacyAttributeForm) {
    Tensor t = runOneNodeTensor(node(
        "Reshape", {iota({6})},
        [](auto& n) {
            setAttr(n, "shape", I{3, -1});
        },
        4));
    EXPECT_EQ(t.shape(), Shape({3, 2}));
}

TEST(ShapeManipulationOps, ReshapeErrorsAreClear) {
    EXPECT_NE(
        errorOf(node("Reshape", {iota({2, 3}), ints({2}, {-1, -1})})).find("more than one -1"),
        std::string::npos);
    const std::string e = errorOf(node("Reshape", {iota({2, 3}), ints({2}, {4, 2})}));
    EXPECT_NE(e.find("under_test"), std::string::npos) << e;
    EXPECT_NE(e.find("[4x2]"), std::string::npos) << e;
    EXPECT_NE(errorOf(node(
                          "Reshape", {iota({0, 3}), ints({2}, {-1, 0})},
                          [](auto& n) { setAttr(n, "allowzero", std::int64_t{1}); }, 14))
                  .find("allowzero"),
              std::string::npos);
}

TEST(ShapeManipulationOps, FlattenAxesIncludingRankAndNegative) {
    auto flat = [](Shape shape, std::int64_t axis) {
        return runOneNodeTensor(
                   node("Flatten", {iota(shape)}, [=](auto& n) { setAttr(n, "axis", axis); }))
            .shape();
    };
    EXPECT_EQ(flat({2, 3, 4}, 3), Shape({24, 1}));
    EXPECT_EQ(flat({2, 3, 4}, -1), Shape({6, 4}));
    EXPECT_EQ(flat({2, 0, 4}, 2), Shape({0, 4}));
    EXPECT_NE(errorOf(node("Flatten", {iota({2, 3})},
                           [](auto& n) { setAttr(n, "axis", std::int64_t{3}); }))
                  .find("out of range"),
              std::string::npos);
}

TEST(ShapeManipulationOps, SqueezeAllUnitDimsOrNamedOnes) {
    EXPECT_EQ(runOneNodeTensor(node("Squeeze", {iota({1, 3, 1, 2})})).shape(), Shape({3, 2}));
    EXPECT_EQ(runOneNodeTensor(node("Squeeze", {iota({1, 3, 1}), ints({0}, {})})).shape(),
              Shape({3}));
    EXPECT_EQ(runOneNodeTensor(node("Squeeze", {iota({1, 3, 1, 2}), ints({1}, {-2})})).shape(),
              Shape({1, 3, 2}));
    EXPECT_EQ(runOneNodeTensor(
                  node(
                      "Squeeze", {iota({1, 3})}, [](auto& n) { setAttr(n, "axes", I{0}); }, 11))
                  .shape(),
              Shape({3}));
    const std::string e = errorOf(node("Squeeze", {iota({1, 3}), ints({1}, {1})}));
    EXPECT_NE(e.find("size 3"), std::string::npos) << e;
}

TEST(ShapeManipulationOps, UnsqueezeAxesCountInTheOutputRank) {
    EXPECT_EQ(runOneNodeTensor(node("Unsqueeze", {iota({3, 4}), ints({2}, {-1, 0})})).shape(),
              Shape({1, 3, 4, 1}));
    EXPECT_EQ(runOneNodeTensor(node(
                                   "Unsqueeze", {iota({})},
                                   [](auto& n) {
                                       setAttr(n, "axes", I{0, 1});
                                   },
                                   11))
                  .shape(),
              Shape({1, 1}));
    EXPECT_NE(errorOf(node("Unsqueeze", {iota({3}), ints({2}, {0, -3})})).find("repeated"),
              std::string::npos);
}

TEST(ShapeManipulationOps, TransposeLargeMatrixMatchesIndexFormula) {
    // Big enough for the tiled path, odd sizes so that partial tiles are exercised.
    const std::int64_t b = 2, r = 37, c = 45;
    Tensor t = runOneNodeTensor(node("Transpose", {iota({b, r, c})}, [](auto& n) {
        setAttr(n, "perm", I{0, 2, 1});
    }));
    ASSERT_EQ(t.shape(), Shape({b, c, r}));
    const float* v = t.data<float>();
    for (std::int64_t i = 0; i < b; ++i)
        for (std::int64_t j = 0; j < c; ++j)
            for (std::int64_t k = 0; k < r; ++k)
                ASSERT_EQ(v[(i * c + j) * r + k], static_cast<float>((i * r + k) * c + j));
}

// Bytes take the 16 x 16 block transposes at every size: an 8-bit image to channels-last and
// back (1 to 4 and 37 channels, odd spatial sizes: whole and partial blocks, batches).
TEST(ShapeManipulationOps, TransposeOfBytesToAndFromChannelsLast) {
    for (const Shape& shape : {Shape{2, 3, 19, 23}, Shape{1, 37, 9, 35}, Shape{1, 4, 5, 17},
                               Shape{3, 1, 6, 7}, Shape{2, 2, 33, 3}}) {
        const std::int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
        std::vector<std::uint8_t> values(static_cast<std::size_t>(n * c * h * w));
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<std::uint8_t>(i * 7 + i / 256);
        const Tensor x = makeTensor<std::uint8_t>(shape, values);
        const Tensor last = runOneNodeTensor(node("Transpose", {x}, [](auto& nd) {
            setAttr(nd, "perm", I{0, 2, 3, 1});
        }));
        ASSERT_EQ(last.shape(), Shape({n, h, w, c}));
        const std::uint8_t* v = last.data<std::uint8_t>();
        for (std::int64_t b = 0; b < n; ++b)
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t z = 0; z < w; ++z)
                    for (std::int64_t k = 0; k < c; ++k)
                        ASSERT_EQ(v[((b * h + y) * w + z) * c + k],
                                  values[static_cast<std::size_t>(((b * c + k) * h + y) * w + z)]);
        const Tensor back = runOneNodeTensor(node("Transpose", {last}, [](auto& nd) {
            setAttr(nd, "perm", I{0, 3, 1, 2});
        }));
        ASSERT_EQ(back.shape(), shape);
        ASSERT_EQ(0, std::memcmp(back.raw(), values.data(), values.size()));
    }
}

TEST(ShapeManipulationOps, TransposeGeneralPermutationAndDefault) {
    Tensor t = runOneNodeTensor(node("Transpose", {iota({2, 3, 4, 5})}, [](auto& n) {
        setAttr(n, "perm", I{2, 0, 3, 1});
    }));
    ASSERT_EQ(t.shape(), Shape({4, 2, 5, 3}));
    const float* v = t.data<float>();
    for (std::int64_t a = 0; a < 4; ++a)
        for (std::int64_t b = 0; b < 2; ++b)
            for (std::int64_t c = 0; c < 5; ++c)
                for (std::int64_t d = 0; d < 3; ++d)
                    ASSERT_EQ(v[((a * 2 + b) * 5 + c) * 3 + d],
                              static_cast<float>(((b * 3 + d) * 4 + a) * 5 + c));
    t = runOneNodeTensor(node("Transpose", {strings({2, 3}, {"a", "b", "c", "d", "e", "f"})}));
    EXPECT_EQ(valuesOf<std::string>(t), S({"a", "d", "b", "e", "c", "f"}));
    t = runOneNodeTensor(node("Transpose", {iota({0, 3})}));
    EXPECT_EQ(t.shape(), Shape({3, 0}));
    EXPECT_NE(errorOf(node("Transpose", {iota({2, 3})},
                           [](auto& n) {
                               setAttr(n, "perm", I{0, 0});
                           }))
                  .find("not a permutation"),
              std::string::npos);
}

TEST(ShapeManipulationOps, LargeCopiesSplitOverThreadsMatchTheFormulas) {
    // Big enough that the pool splits the rows, so chunks start in the middle of the tensor.
    const std::int64_t a = 64, b = 50, c = 70;
    auto run = [](const OneNodeSpec& spec) {
        auto result = runOneNode(spec, 4);
        EXPECT_TRUE(result) << (result ? "" : result.error().message);
        return result ? result->at(0).tensor() : Tensor();
    };
    Tensor t = run(node("Transpose", {iota({a, b, c})}, [](auto& n) {
        setAttr(n, "perm", I{1, 2, 0});
    }));
    ASSERT_EQ(t.shape(), Shape({b, c, a}));
    for (std::int64_t j = 0; j < b; ++j)
        for (std::int64_t k = 0; k < c; ++k)
            for (std::int64_t i = 0; i < a; ++i)
                ASSERT_EQ(t.data<float>()[(j * c + k) * a + i],
                          static_cast<float>((i * b + j) * c + k));
    t = run(node("Slice", {iota({a, b, c}), ints({2}, {-1, 1}), ints({2}, {-1000, 1000}),
                           ints({2}, {0, 2}), ints({2}, {-1, 3})}));
    ASSERT_EQ(t.shape(), Shape({a, b, 23}));
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t j = 0; j < b; ++j)
            for (std::int64_t k = 0; k < 23; ++k)
                ASSERT_EQ(t.data<float>()[(i * b + j) * 23 + k],
                          static_cast<float>(((a - 1 - i) * b + j) * c + 1 + 3 * k));
    t = run(node("Concat", {iota({a, b, c}), iota({a, 1, c})},
                 [](auto& n) { setAttr(n, "axis", std::int64_t{1}); }));
    ASSERT_EQ(t.shape(), Shape({a, b + 1, c}));
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t k = 0; k < c; ++k) {
            ASSERT_EQ(t.data<float>()[(i * (b + 1) + 3) * c + k],
                      static_cast<float>((i * b + 3) * c + k));
            ASSERT_EQ(t.data<float>()[(i * (b + 1) + b) * c + k], static_cast<float>(i * c + k));
        }
}

TEST(ShapeManipulationOps, ConcatSkipsEmptyInputsAndChecksShapes) {
    Tensor t = runOneNodeTensor(
        node("Concat", {ints({2, 1}, {1, 2}), ints({2, 0}, {}), ints({2, 2}, {3, 4, 5, 6})},
             [](auto& n) { setAttr(n, "axis", std::int64_t{-1}); }));
    EXPECT_EQ(t.shape(), Shape({2, 3}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({1, 3, 4, 2, 5, 6}));
    t = runOneNodeTensor(node("Concat", {strings({1}, {"x"}), strings({2}, {"y", "z"})},
                              [](auto& n) { setAttr(n, "axis", std::int64_t{0}); }));
    EXPECT_EQ(valuesOf<std::string>(t), S({"x", "y", "z"}));
    const std::string e = errorOf(node("Concat", {iota({2, 3}), iota({3, 3})},
                                       [](auto& n) { setAttr(n, "axis", std::int64_t{1}); }));
    EXPECT_NE(e.find("[3x3]"), std::string::npos) << e;
}

TEST(ShapeManipulationOps, SplitEqualVariableAndUneven) {
    auto result = runOneNode(node(
        "Split", {iota({2, 6})}, [](auto& n) { setAttr(n, "axis", std::int64_t{-1}); }, 17, 3));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(1).tensor()), F({2, 3, 8, 9}));
    result = runOneNode(node("Split", {iota({5}), ints({3}, {0, 2, 3})}, {}, 13, 3));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->at(0).tensor().shape(), Shape({0}));
    EXPECT_EQ(valuesOf<float>(result->at(2).tensor()), F({2, 3, 4}));
    result = runOneNode(node(
        "Split", {iota({5})},
        [](auto& n) {
            setAttr(n, "split", I{4, 1});
        },
        11, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(1).tensor()), F({4}));
    // num_outputs (opset 18): ceil-sized parts, the last one smaller.
    result = runOneNode(node(
        "Split", {iota({5})}, [](auto& n) { setAttr(n, "num_outputs", std::int64_t{3}); }, 18, 3));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(2).tensor()), F({4}));
    EXPECT_NE(errorOf(node("Split", {iota({5})}, {}, 17, 2)).find("equal parts"),
              std::string::npos);
    EXPECT_NE(
        errorOf(node("Split", {iota({5}), ints({2}, {1, 1})}, {}, 17, 2)).find("do not add up"),
        std::string::npos);
}

TEST(ShapeManipulationOps, SliceNegativeStepsAndClamping) {
    auto slice = [](Value x, I starts, I ends, I axes, I steps) {
        const auto n = static_cast<std::int64_t>(starts.size());
        return runOneNodeTensor(node("Slice", {std::move(x), ints({n}, starts), ints({n}, ends),
                                               ints({n}, axes), ints({n}, steps)}));
    };
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const std::int64_t small = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(valuesOf<float>(slice(iota({5}), {-1}, {small}, {0}, {-1})), F({4, 3, 2, 1, 0}));
    EXPECT_EQ(valuesOf<float>(slice(iota({5}), {100}, {0}, {0}, {-2})), F({4, 2}));
    EXPECT_EQ(valuesOf<float>(slice(iota({5}), {-100}, {big}, {0}, {3})), F({0, 3}));
    EXPECT_EQ(slice(iota({5}), {3}, {1}, {0}, {1}).shape(), Shape({0}));
    Tensor t = slice(iota({3, 4}), {2, 1}, {0, 3}, {-1, 0}, {-1, 1});
    EXPECT_EQ(t.shape(), Shape({2, 2}));
    EXPECT_EQ(valuesOf<float>(t), F({6, 5, 10, 9}));
    EXPECT_EQ(slice(iota({0, 3}), {0}, {1}, {0}, {1}).shape(), Shape({0, 3}));
    EXPECT_NE(errorOf(node("Slice", {iota({5}), ints({1}, {0}), ints({1}, {5}), ints({1}, {0}),
                                     ints({1}, {0})}))
                  .find("step 0"),
              std::string::npos);
}

TEST(ShapeManipulationOps, SliceLegacyAttributes) {
    Tensor t = runOneNodeTensor(node(
        "Slice", {iota({3, 4})},
        [](auto& n) {
            setAttr(n, "starts", I{1});
            setAttr(n, "ends", I{-1});
            setAttr(n, "axes", I{1});
        },
        9));
    EXPECT_EQ(valuesOf<float>(t), F({1, 2, 5, 6, 9, 10}));
}

TEST(ShapeManipulationOps, ExpandBroadcastsBothWays) {
    Tensor t = runOneNodeTensor(node("Expand", {ints({3, 1}, {1, 2, 3}), ints({2}, {1, 2})}));
    EXPECT_EQ(t.shape(), Shape({3, 2}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({1, 1, 2, 2, 3, 3}));
    t = runOneNodeTensor(node("Expand", {strings({1}, {"s"}), ints({3}, {2, 1, 2})}));
    EXPECT_EQ(t.shape(), Shape({2, 1, 2}));
    EXPECT_EQ(valuesOf<std::string>(t), S(4, "s"));
    EXPECT_EQ(runOneNodeTensor(node("Expand", {iota({1, 2}), ints({2}, {0, 1})})).shape(),
              Shape({0, 2}));
    EXPECT_NE(errorOf(node("Expand", {iota({3}), ints({1}, {2})})).find("cannot be broadcast"),
              std::string::npos);
}

TEST(ShapeManipulationOps, TileRepeatsEveryAxis) {
    Tensor t = runOneNodeTensor(node("Tile", {ints({2, 2}, {1, 2, 3, 4}), ints({2}, {2, 3})}));
    ASSERT_EQ(t.shape(), Shape({4, 6}));
    const auto v = valuesOf<std::int64_t>(t);
    for (std::int64_t r = 0; r < 4; ++r)
        for (std::int64_t c = 0; c < 6; ++c)
            EXPECT_EQ(v[static_cast<std::size_t>(r * 6 + c)], (r % 2) * 2 + c % 2 + 1);
    EXPECT_EQ(runOneNodeTensor(node("Tile", {iota({2, 3}), ints({2}, {0, 2})})).shape(),
              Shape({0, 6}));
    Value flags(makeTensor<bool>({2}, {true, false}));
    EXPECT_EQ(valuesOf<bool>(runOneNodeTensor(node("Tile", {flags, ints({1}, {2})}))),
              std::vector<bool>({true, false, true, false}));
    EXPECT_NE(errorOf(node("Tile", {iota({2, 3}), ints({1}, {2})})).find("rank"),
              std::string::npos);
}

TEST(ShapeManipulationOps, PadModesOnOneAxis) {
    auto pad = [](std::string mode, I pads) {
        return valuesOf<float>(
            runOneNodeTensor(node("Pad", {floats({4}, {1, 2, 3, 4}), ints({2}, pads)},
                                  [=](auto& n) { setAttr(n, "mode", mode); })));
    };
    EXPECT_EQ(pad("constant", {2, 1}), F({0, 0, 1, 2, 3, 4, 0}));
    EXPECT_EQ(pad("edge", {2, 1}), F({1, 1, 1, 2, 3, 4, 4}));
    // Reflection keeps bouncing when the pad is wider than the data (numpy's rule).
    EXPECT_EQ(pad("reflect", {5, 4}), F({2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2}));
    EXPECT_EQ(pad("wrap", {2, 1}), F({3, 4, 1, 2, 3, 4, 1}));
    // Negative pads crop.
    EXPECT_EQ(pad("constant", {-1, 1}), F({2, 3, 4, 0}));
    EXPECT_EQ(pad("reflect", {-2, -1}), F({3}));
}

TEST(ShapeManipulationOps, PadTwoDimsWithConstantValue) {
    Tensor t = runOneNodeTensor(
        node("Pad", {ints({2, 2}, {1, 2, 3, 4}), ints({4}, {1, 0, 0, 1}), ints({}, {9})}));
    EXPECT_EQ(t.shape(), Shape({3, 3}));
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({9, 9, 9, 1, 2, 9, 3, 4, 9}));
    t = runOneNodeTensor(node("Pad", {strings({1}, {"a"}), ints({2}, {1, 0})}));
    EXPECT_EQ(valuesOf<std::string>(t), S({"", "a"}));
    // Opset 2 takes pads and value as attributes.
    t = runOneNodeTensor(node(
        "Pad", {floats({1, 1}, {5})},
        [](auto& n) {
            setAttr(n, "pads", I{0, 1, 0, 0});
            setAttr(n, "value", 1.5f);
        },
        2));
    EXPECT_EQ(valuesOf<float>(t), F({1.5f, 5}));
    EXPECT_NE(errorOf(node("Pad", {iota({2, 0}), ints({4}, {0, 1, 0, 1})},
                           [](auto& n) { setAttr(n, "mode", std::string("edge")); }))
                  .find("empty"),
              std::string::npos);
    EXPECT_NE(errorOf(node("Pad", {iota({2}), ints({2}, {-3, 0})})).find("crop"),
              std::string::npos);
}

TEST(ShapeManipulationOps, RangeIntegerFloatAndEmpty) {
    auto range = [](Value a, Value b, Value c) {
        return runOneNodeTensor(node("Range", {a, b, c}));
    };
    Value s(Tensor::scalar<std::int32_t>(10)), l(Tensor::scalar<std::int32_t>(3)),
        d(Tensor::scalar<std::int32_t>(-3));
    EXPECT_EQ(valuesOf<std::int32_t>(range(s, l, d)), std::vector<std::int32_t>({10, 7, 4}));
    Tensor t = range(Value(Tensor::scalar<double>(0.0)), Value(Tensor::scalar<double>(1.0)),
                     Value(Tensor::scalar<double>(0.25)));
    EXPECT_EQ(valuesOf<double>(t), std::vector<double>({0, 0.25, 0.5, 0.75}));
    EXPECT_EQ(range(Value(Tensor::scalar<std::int64_t>(5)), Value(Tensor::scalar<std::int64_t>(1)),
                    Value(Tensor::scalar<std::int64_t>(2)))
                  .shape(),
              Shape({0}));
    EXPECT_NE(
        errorOf(node("Range", {Value(Tensor::scalar<float>(0)), Value(Tensor::scalar<float>(1)),
                               Value(Tensor::scalar<float>(0))}))
            .find("delta is 0"),
        std::string::npos);
}

TEST(ShapeManipulationOps, EyeLikeOffDiagonalsAndDtype) {
    Tensor t = runOneNodeTensor(node("EyeLike", {iota({2, 4})}, [](auto& n) {
        setAttr(n, "k", std::int64_t{-1});
        setAttr(n, "dtype", std::int64_t{7});
    }));
    EXPECT_EQ(t.dtype(), DataType::Int64);
    EXPECT_EQ(valuesOf<std::int64_t>(t), I({0, 0, 0, 0, 1, 0, 0, 0}));
    t = runOneNodeTensor(
        node("EyeLike", {iota({3, 3})}, [](auto& n) { setAttr(n, "k", std::int64_t{5}); }));
    EXPECT_EQ(valuesOf<float>(t), F(9, 0.0f));
}

TEST(ShapeManipulationOps, TriluOnBatchesWithDiagonalOffsets) {
    auto trilu = [](std::int64_t upper, std::int64_t k) {
        return valuesOf<float>(
            runOneNodeTensor(node("Trilu", {iota({2, 2, 3}), ints({}, {k})},
                                  [=](auto& n) { setAttr(n, "upper", upper); })));
    };
    EXPECT_EQ(trilu(1, 1), F({0, 1, 2, 0, 0, 5, 0, 7, 8, 0, 0, 11}));
    EXPECT_EQ(trilu(0, -1), F({0, 0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0}));
    EXPECT_EQ(trilu(0, 10), F({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    Tensor t = runOneNodeTensor(node("Trilu", {strings({2, 2}, {"a", "b", "c", "d"})}));
    EXPECT_EQ(valuesOf<std::string>(t), S({"a", "b", "", "d"}));
}

TEST(ShapeManipulationOps, DepthToSpaceAndSpaceToDepthFollowTheIndexFormulas) {
    const std::int64_t n = 2, c = 8, h = 2, w = 3, b = 2, cOut = c / (b * b);
    for (std::string mode : {"DCR", "CRD"}) {
        Tensor t = runOneNodeTensor(node("DepthToSpace", {iota({n, c, h, w})}, [&](auto& nd) {
            setAttr(nd, "blocksize", b);
            setAttr(nd, "mode", mode);
        }));
        ASSERT_EQ(t.shape(), Shape({n, cOut, h * b, w * b}));
        const float* v = t.data<float>();
        for (std::int64_t in = 0; in < n; ++in)
            for (std::int64_t oc = 0; oc < cOut; ++oc)
                for (std::int64_t y = 0; y < h * b; ++y)
                    for (std::int64_t x = 0; x < w * b; ++x) {
                        const std::int64_t by = y % b, bx = x % b;
                        const std::int64_t ic =
                            mode == "DCR" ? (by * b + bx) * cOut + oc : oc * b * b + by * b + bx;
                        const float expected =
                            static_cast<float>(((in * c + ic) * h + y / b) * w + x / b);
                        ASSERT_EQ(v[((in * cOut + oc) * h * b + y) * w * b + x], expected) << mode;
                    }
    }
    Tensor t = runOneNodeTensor(
        node("SpaceToDepth", {iota({1, 2, 4, 2})}, [&](auto& nd) { setAttr(nd, "blocksize", b); }));
    ASSERT_EQ(t.shape(), Shape({1, 8, 2, 1}));
    const float* v = t.data<float>();
    for (std::int64_t oc = 0; oc < 8; ++oc)
        for (std::int64_t y = 0; y < 2; ++y) {
            const std::int64_t ic = oc % 2, by = oc / 2 / b, bx = oc / 2 % b;
            EXPECT_EQ(v[oc * 2 + y], static_cast<float>((ic * 4 + y * b + by) * 2 + bx));
        }
    EXPECT_NE(errorOf(node("SpaceToDepth", {iota({1, 1, 3, 2})},
                           [&](auto& nd) { setAttr(nd, "blocksize", b); }))
                  .find("not divisible"),
              std::string::npos);
    EXPECT_NE(errorOf(node("DepthToSpace", {iota({1, 3, 1, 1})},
                           [&](auto& nd) { setAttr(nd, "blocksize", b); }))
                  .find("not divisible"),
              std::string::npos);
}

TEST(ShapeManipulationOps, DropoutInferenceAndSeededTraining) {
    auto result = runOneNode(node("Dropout", {floats({3}, {1, 2, 3})}, {}, 13, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(0).tensor()), F({1, 2, 3}));
    EXPECT_EQ(valuesOf<bool>(result->at(1).tensor()), std::vector<bool>({true, true, true}));
    // Opset 7: the mask has the input's type.
    result = runOneNode(node("Dropout", {floats({2}, {1, 2})}, {}, 7, 2));
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(valuesOf<float>(result->at(1).tensor()), F({1, 1}));
    // Training mode: every output is 0 or x / (1 - ratio), in step with the mask.
    Tensor x(DataType::Float, {1000});
    for (std::int64_t i = 0; i < 1000; ++i) x.data<float>()[i] = 1.0f + static_cast<float>(i);
    result = runOneNode(node(
        "Dropout",
        {Value(x), Value(Tensor::scalar<float>(0.75f)), Value(Tensor::scalar<bool>(true))},
        [](auto& n) { setAttr(n, "seed", std::int64_t{3}); }, 13, 2));
    ASSERT_TRUE(result) << result.error().message;
    const float* y = result->at(0).tensor().data<float>();
    const bool* mask = result->at(1).tensor().data<bool>();
    int kept = 0;
    for (std::int64_t i = 0; i < 1000; ++i) {
        EXPECT_FLOAT_EQ(y[i], mask[i] ? x.data<float>()[i] * 4.0f : 0.0f);
        kept += mask[i];
    }
    EXPECT_GT(kept, 180);
    EXPECT_LT(kept, 320);
    EXPECT_NE(errorOf(node("Dropout", {Value(x), Value(Tensor::scalar<float>(1.0f)),
                                       Value(Tensor::scalar<bool>(true))}))
                  .find("ratio"),
              std::string::npos);
}

// Sizes read from tensors can be anything: extreme values must give an error (or the right
// empty/zero result), never overflow or a crash.
TEST(ShapeManipulationOps, ExtremeSizesFailCleanly) {
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    const std::int64_t min = std::numeric_limits<std::int64_t>::min();
    EXPECT_NE(errorOf(node("Reshape", {iota({2}), ints({3}, {max, 4, -1})})).find("overflows"),
              std::string::npos);
    EXPECT_NE(errorOf(node("Tile", {iota({2}), ints({1}, {max})})).find("overflows"),
              std::string::npos);
    EXPECT_NE(errorOf(node("Pad", {iota({2}), ints({2}, {max, 1})})).find("overflows"),
              std::string::npos);
    EXPECT_NE(errorOf(node("Range",
                           {Value(Tensor::scalar<double>(0)), Value(Tensor::scalar<double>(1e300)),
                            Value(Tensor::scalar<double>(1e-300))}))
                  .find("count"),
              std::string::npos);
    EXPECT_FALSE(errorOf(node("Range", {Value(Tensor::scalar<std::int64_t>(min)),
                                        Value(Tensor::scalar<std::int64_t>(max)),
                                        Value(Tensor::scalar<std::int64_t>(1))}))
                     .empty());
    EXPECT_FALSE(errorOf(node("ConstantOfShape", {ints({3}, {max, max, 2})})).empty());
    Tensor t = runOneNodeTensor(node("Slice", {iota({5}), ints({1}, {max}), ints({1}, {min}),
                                               ints({1}, {0}), ints({1}, {min})}));
    EXPECT_EQ(valuesOf<float>(t), F({4}));
    t = runOneNodeTensor(node("EyeLike", {iota({2, 2})}, [=](auto& n) { setAttr(n, "k", min); }));
    EXPECT_EQ(valuesOf<float>(t), F({0, 0, 0, 0}));
}

}  // namespace
}  // namespace onnxlens::testing
