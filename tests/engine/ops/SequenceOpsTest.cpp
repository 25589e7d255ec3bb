// Sequence and optional operators: positions (negative, out of range), splitting and joining
// along axes, empty sequences and optionals.
#include <gtest/gtest.h>

#include "ControlFlowTestGraphs.h"

namespace onnxlens::testing {
namespace {

Tensor floats(Shape shape, std::vector<float> values) {
    return makeTensor<float>(std::move(shape), std::move(values));
}
Value seqOf(std::vector<Tensor> items) {
    return Value::sequence(std::move(items), DataType::Float);
}
Value position(std::int64_t p) { return Tensor::scalar<std::int64_t>(p); }

std::vector<std::vector<float>> contents(const Value& v) {
    std::vector<std::vector<float>> out;
    for (const auto& t : v.sequence()) out.push_back(valuesOf<float>(t));
    return out;
}

Result<std::vector<Value>> runSequenceOp(const std::string& op, std::vector<Value> inputs,
                                         std::function<void(onnx::NodeProto&)> attributes = {}) {
    OneNodeSpec spec;
    spec.opType = op;
    spec.inputs = std::move(inputs);
    spec.attributes = std::move(attributes);
    return runOneNode(spec);
}

void expectErrorContaining(const Result<std::vector<Value>>& r, const std::string& text) {
    ASSERT_FALSE(r) << "expected an error containing '" << text << "'";
    EXPECT_NE(r.error().message.find(text), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("under_test"), std::string::npos) << r.error().message;
}

const Tensor a = floats({1}, {1}), b = floats({1}, {2}), c = floats({1}, {3});

TEST(SequenceOpsTest, EmptyHasTheRequestedType) {
    auto r = runSequenceOp("SequenceEmpty", {},
                           [](onnx::NodeProto& n) { setAttr(n, "dtype", std::int64_t{7}); });
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->at(0).sequence().empty());
    EXPECT_EQ(r->at(0).sequenceElementType(), DataType::Int64);
}

TEST(SequenceOpsTest, ConstructKeepsOrderAndRejectsMixedTypes) {
    auto r = runSequenceOp("SequenceConstruct", {a, b, c});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(contents(r->at(0)), (std::vector<std::vector<float>>{{1}, {2}, {3}}));
    expectErrorContaining(runSequenceOp("SequenceConstruct", {a, Tensor::scalar<std::int64_t>(1)}),
                          "int64");
}

TEST(SequenceOpsTest, InsertAtPositions) {
    auto back = runSequenceOp("SequenceInsert", {seqOf({a, b}), c});
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(contents(back->at(0)), (std::vector<std::vector<float>>{{1}, {2}, {3}}));
    auto front = runSequenceOp("SequenceInsert", {seqOf({a, b}), c, position(0)});
    ASSERT_TRUE(front);
    EXPECT_EQ(contents(front->at(0)), (std::vector<std::vector<float>>{{3}, {1}, {2}}));
    auto negative = runSequenceOp("SequenceInsert", {seqOf({a, b}), c, position(-1)});
    ASSERT_TRUE(negative);
    EXPECT_EQ(contents(negative->at(0)), (std::vector<std::vector<float>>{{1}, {3}, {2}}));
    auto atEnd = runSequenceOp("SequenceInsert", {seqOf({a, b}), c, position(2)});
    ASSERT_TRUE(atEnd);
    EXPECT_EQ(contents(atEnd->at(0)), (std::vector<std::vector<float>>{{1}, {2}, {3}}));
    expectErrorContaining(runSequenceOp("SequenceInsert", {seqOf({a, b}), c, position(3)}),
                          "out of range");
    expectErrorContaining(runSequenceOp("SequenceInsert", {seqOf({a, b}), c, position(-3)}),
                          "out of range");
    expectErrorContaining(
        runSequenceOp("SequenceInsert", {seqOf({a}), Tensor::scalar<std::int32_t>(1)}), "int32");
}

TEST(SequenceOpsTest, InsertLeavesTheInputSequenceUnchanged) {
    const Value original = seqOf({a});
    auto r = runSequenceOp("SequenceInsert", {original, b});
    ASSERT_TRUE(r);
    EXPECT_EQ(original.sequence().size(), 1u);
    EXPECT_EQ(r->at(0).sequence().size(), 2u);
}

TEST(SequenceOpsTest, AtWithNegativeAndOutOfRangePositions) {
    auto last = runSequenceOp("SequenceAt", {seqOf({a, b, c}), position(-1)});
    ASSERT_TRUE(last) << last.error().message;
    EXPECT_EQ(valuesOf<float>(last->at(0).tensor()), (std::vector<float>{3}));
    auto first = runSequenceOp("SequenceAt", {seqOf({a, b, c}), Tensor::scalar<std::int32_t>(0)});
    ASSERT_TRUE(first);
    EXPECT_EQ(valuesOf<float>(first->at(0).tensor()), (std::vector<float>{1}));
    expectErrorContaining(runSequenceOp("SequenceAt", {seqOf({a, b, c}), position(3)}),
                          "out of range");
    expectErrorContaining(runSequenceOp("SequenceAt", {seqOf({}), position(0)}), "out of range");
}

TEST(SequenceOpsTest, EraseDefaultsToTheLastElement) {
    auto r = runSequenceOp("SequenceErase", {seqOf({a, b, c})});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(contents(r->at(0)), (std::vector<std::vector<float>>{{1}, {2}}));
    auto atFront = runSequenceOp("SequenceErase", {seqOf({a, b, c}), position(-3)});
    ASSERT_TRUE(atFront);
    EXPECT_EQ(contents(atFront->at(0)), (std::vector<std::vector<float>>{{2}, {3}}));
    expectErrorContaining(runSequenceOp("SequenceErase", {seqOf({})}), "empty sequence");
}

TEST(SequenceOpsTest, LengthCountsElements) {
    for (std::size_t n : {0u, 2u}) {
        std::vector<Tensor> items(n, a);
        auto r = runSequenceOp("SequenceLength", {seqOf(items)});
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ(r->at(0).tensor().shape(), Shape{});
        EXPECT_EQ(valuesOf<std::int64_t>(r->at(0).tensor()),
                  (std::vector<std::int64_t>{std::int64_t(n)}));
    }
}

TEST(SequenceOpsTest, SplitWithoutLengthsGivesOneSlicePerIndex) {
    const Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
    auto squeezed = runSequenceOp("SplitToSequence", {x}, [](onnx::NodeProto& n) {
        setAttr(n, "axis", std::int64_t{-1});
        setAttr(n, "keepdims", std::int64_t{0});
    });
    ASSERT_TRUE(squeezed) << squeezed.error().message;
    EXPECT_EQ(contents(squeezed->at(0)), (std::vector<std::vector<float>>{{1, 4}, {2, 5}, {3, 6}}));
    EXPECT_EQ(squeezed->at(0).sequence()[0].shape(), (Shape{2}));
    auto kept = runSequenceOp("SplitToSequence", {x},
                              [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{1}); });
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->at(0).sequence()[2].shape(), (Shape{2, 1}));
}

TEST(SequenceOpsTest, SplitWithScalarChunkLeavesASmallerLastPart) {
    auto r = runSequenceOp("SplitToSequence", {floats({5}, {1, 2, 3, 4, 5}), position(2)});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(contents(r->at(0)), (std::vector<std::vector<float>>{{1, 2}, {3, 4}, {5}}));
}

TEST(SequenceOpsTest, SplitWithLengthsIncludingZero) {
    auto r = runSequenceOp("SplitToSequence",
                           {floats({4}, {1, 2, 3, 4}), makeTensor<std::int64_t>({3}, {1, 0, 3})});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(contents(r->at(0)), (std::vector<std::vector<float>>{{1}, {}, {2, 3, 4}}));
    expectErrorContaining(runSequenceOp("SplitToSequence", {floats({4}, {1, 2, 3, 4}),
                                                            makeTensor<std::int64_t>({2}, {1, 2})}),
                          "sum to 3");
}

TEST(SequenceOpsTest, SplitOfAZeroSizeAxisIsEmpty) {
    auto r = runSequenceOp("SplitToSequence", {Tensor(DataType::Float, {0, 3})});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->at(0).sequence().empty());
    EXPECT_EQ(r->at(0).sequenceElementType(), DataType::Float);
}

TEST(SequenceOpsTest, ConcatAlongAnAxisAndStackAlongANewOne) {
    const Value items = seqOf({floats({2, 1}, {1, 2}), floats({2, 2}, {3, 4, 5, 6})});
    auto concat = runSequenceOp("ConcatFromSequence", {items},
                                [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{-1}); });
    ASSERT_TRUE(concat) << concat.error().message;
    EXPECT_EQ(concat->at(0).tensor().shape(), (Shape{2, 3}));
    EXPECT_EQ(valuesOf<float>(concat->at(0).tensor()), (std::vector<float>{1, 3, 4, 2, 5, 6}));

    const Value pair = seqOf({floats({2}, {1, 2}), floats({2}, {3, 4})});
    auto stacked = runSequenceOp("ConcatFromSequence", {pair}, [](onnx::NodeProto& n) {
        setAttr(n, "axis", std::int64_t{-1});
        setAttr(n, "new_axis", std::int64_t{1});
    });
    ASSERT_TRUE(stacked) << stacked.error().message;
    EXPECT_EQ(stacked->at(0).tensor().shape(), (Shape{2, 2}));
    EXPECT_EQ(valuesOf<float>(stacked->at(0).tensor()), (std::vector<float>{1, 3, 2, 4}));
}

TEST(SequenceOpsTest, ConcatErrors) {
    auto axis0 = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{0}); };
    expectErrorContaining(runSequenceOp("ConcatFromSequence", {seqOf({})}, axis0), "non-empty");
    expectErrorContaining(
        runSequenceOp("ConcatFromSequence",
                      {seqOf({floats({1, 2}, {1, 2}), floats({1, 3}, {1, 2, 3})})}, axis0),
        "cannot concatenate");
    expectErrorContaining(
        runSequenceOp("ConcatFromSequence", {seqOf({a})},
                      [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{2}); }),
        "axis");
}

TEST(SequenceOpsTest, MapAppliesTheBodyPerElementWithTensorInputsWhole) {
    // body(x_i, t) = ConcatFromSequence(SequenceConstruct(x_i, t), axis 0).
    TestGraph body("body");
    body.input("x").input("t");
    body.node("SequenceConstruct", {"x", "t"}, {"pair"});
    setAttr(body.node("ConcatFromSequence", {"pair"}, {"joined"}), "axis", std::int64_t{0});
    body.output("joined");
    TestGraph g;
    g.input("xs").input("t").output("ys");
    setGraphAttr(g.node("SequenceMap", {"xs", "t"}, {"ys"}), "body", body);
    auto r = runGraph(g, {{"xs", seqOf({a, floats({2}, {5, 6})})}, {"t", floats({1}, {0})}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(contents(r->at(0)), (std::vector<std::vector<float>>{{1, 0}, {5, 6, 0}}));

    auto empty = runGraph(g, {{"xs", seqOf({})}, {"t", floats({1}, {0})}});
    ASSERT_TRUE(empty) << empty.error().message;
    EXPECT_TRUE(empty->at(0).sequence().empty());
}

TEST(SequenceOpsTest, MapRequiresEqualSequenceLengths) {
    TestGraph body("body");
    body.input("x").input("y");
    body.output("x");
    TestGraph g;
    g.input("xs").input("ys").output("out");
    setGraphAttr(g.node("SequenceMap", {"xs", "ys"}, {"out"}), "body", body);
    auto r = runGraph(g, {{"xs", seqOf({a, b})}, {"ys", seqOf({a})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("has 1 elements"), std::string::npos) << r.error().message;
}

// Optional(x?) -> OptionalHasElement, and OptionalGetElement when present.
TestGraph optionalChain(bool withInput) {
    TestGraph g;
    if (withInput) g.input("x");
    auto& make = g.node("Optional", {withInput ? "x" : ""}, {"opt"});
    if (!withInput) {
        auto* attr = make.add_attribute();
        attr->set_name("type");
        attr->set_type(onnx::AttributeProto::TYPE_PROTO);
        attr->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
    }
    g.node("OptionalHasElement", {"opt"}, {"has"});
    g.node("OptionalGetElement", {"opt"}, {"value"});
    g.output("has").output("value");
    return g;
}

TEST(OptionalOpsTest, FullOptionalHoldsItsValue) {
    auto r = runGraph(optionalChain(true), {{"x", Value(floats({2}, {1, 2}))}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<bool>(r->at(0).tensor()), (std::vector<bool>{true}));
    EXPECT_EQ(valuesOf<float>(r->at(1).tensor()), (std::vector<float>{1, 2}));
}

TEST(OptionalOpsTest, GetElementOfAnEmptyOptionalIsAnError) {
    auto r = runGraph(optionalChain(false), {});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("empty optional"), std::string::npos) << r.error().message;
}

TEST(OptionalOpsTest, EmptyOptionalHasNoElement) {
    TestGraph g;
    auto& make = g.node("Optional", {}, {"opt"});
    auto* attr = make.add_attribute();
    attr->set_name("type");
    attr->set_type(onnx::AttributeProto::TYPE_PROTO);
    attr->mutable_tp()
        ->mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(1);
    g.node("OptionalHasElement", {"opt"}, {"has"});
    g.output("has").output("opt");
    auto r = runGraph(g, {});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<bool>(r->at(0).tensor()), (std::vector<bool>{false}));
    EXPECT_TRUE(r->at(1).isNone());
}

TEST(OptionalOpsTest, OptionalOfASequence) {
    auto r = runGraph(optionalChain(true), {{"x", seqOf({a, b})}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<bool>(r->at(0).tensor()), (std::vector<bool>{true}));
    EXPECT_EQ(contents(r->at(1)), (std::vector<std::vector<float>>{{1}, {2}}));
}

TEST(OptionalOpsTest, OptionalWithoutInputNeedsAType) {
    TestGraph g;
    g.node("Optional", {}, {"opt"});
    g.output("opt");
    auto r = runGraph(g, {});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'type'"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace onnxlens::testing
