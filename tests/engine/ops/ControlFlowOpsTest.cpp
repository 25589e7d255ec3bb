// If, Loop and Scan on hand-built graphs. Bodies use only pass-through outputs and sequence ops so
// that the expected values follow directly from the control-flow semantics.
#include <gtest/gtest.h>

#include "ControlFlowTestGraphs.h"

namespace onnxlens::testing {
namespace {

Value floats(Shape shape, std::vector<float> values) {
    return makeTensor<float>(std::move(shape), std::move(values));
}
Value int64Scalar(std::int64_t v) { return Tensor::scalar<std::int64_t>(v); }
Value boolScalar(bool v) { return Tensor::scalar<bool>(v); }

// --- If -------------------------------------------------------------------------------------

// If(cond) with branches that yield outer-scope values a / b directly.
TestGraph ifGraph() {
    TestGraph thenBranch("then_branch"), elseBranch("else_branch");
    thenBranch.output("a");
    elseBranch.output("b");
    TestGraph g;
    g.input("cond").input("a").input("b").output("y");
    auto& n = g.node("If", {"cond"}, {"y"});
    setGraphAttr(n, "then_branch", thenBranch);
    setGraphAttr(n, "else_branch", elseBranch);
    return g;
}

TEST(IfOpTest, PicksTheBranchAndReadsOuterScope) {
    const Value a = floats({2}, {1, 2}), b = floats({3}, {7, 8, 9});
    auto yes = runGraph(ifGraph(), {{"cond", boolScalar(true)}, {"a", a}, {"b", b}});
    ASSERT_TRUE(yes) << yes.error().message;
    EXPECT_EQ(valuesOf<float>(yes->at(0).tensor()), (std::vector<float>{1, 2}));
    auto no = runGraph(ifGraph(), {{"cond", boolScalar(false)}, {"a", a}, {"b", b}});
    ASSERT_TRUE(no) << no.error().message;
    EXPECT_EQ(valuesOf<float>(no->at(0).tensor()), (std::vector<float>{7, 8, 9}));
}

TEST(IfOpTest, ConditionMustBeOneElement) {
    auto r = runGraph(ifGraph(), {{"cond", makeTensor<bool>({2}, {true, false})},
                                  {"a", floats({1}, {1})},
                                  {"b", floats({1}, {2})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("If"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("exactly one element"), std::string::npos)
        << r.error().message;
}

TEST(IfOpTest, BranchOutputCountMustMatchTheNode) {
    TestGraph thenBranch("then_branch"), elseBranch("else_branch");
    thenBranch.output("a").output("a");
    elseBranch.output("a");
    TestGraph g;
    g.input("cond").input("a").output("y");
    auto& n = g.node("If", {"cond"}, {"y"});
    setGraphAttr(n, "then_branch", thenBranch);
    setGraphAttr(n, "else_branch", elseBranch);
    auto r = runGraph(g, {{"cond", boolScalar(true)}, {"a", floats({1}, {1})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("branch yields 2"), std::string::npos) << r.error().message;
}

TEST(IfOpTest, BranchReadsAnEmptyOptionalFromTheOuterScope) {
    // The outer value is an empty optional (Value::Kind::None); the branch must still see it as
    // defined and report that it holds nothing.
    TestGraph thenBranch("then_branch"), elseBranch("else_branch");
    thenBranch.node("OptionalHasElement", {"maybe"}, {"has"});
    thenBranch.output("has");
    elseBranch.output("flag");
    TestGraph g;
    g.input("flag");
    auto& empty = g.node("Optional", {}, {"maybe"});
    auto* type = empty.add_attribute();
    type->set_name("type");
    type->set_type(onnx::AttributeProto::TYPE_PROTO);
    type->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
    auto& n = g.node("If", {"flag"}, {"y"});
    setGraphAttr(n, "then_branch", thenBranch);
    setGraphAttr(n, "else_branch", elseBranch);
    g.output("y");
    auto r = runGraph(g, {{"flag", Value(Tensor::scalar<bool>(true))}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<bool>(r->at(0).tensor()), (std::vector<bool>{false}));
}

// --- Loop -----------------------------------------------------------------------------------

// Loop(M, cond, seq): each iteration appends the outer value x to the carried sequence and
// emits the iteration number as a scan output.
TestGraph appendingLoop(bool withTripCount, bool withCondition) {
    TestGraph body("body");
    body.input("i").input("cond_in").input("seq_in");
    body.node("SequenceInsert", {"seq_in", "x"}, {"seq_out"});
    body.output("cond_in").output("seq_out").tensorOutput("i", DataType::Int64, {});
    TestGraph g;
    g.input("x").input("seq");
    if (withTripCount) g.input("M");
    if (withCondition) g.input("cond");
    g.output("final_seq").output("iterations");
    auto& n = g.node("Loop", {withTripCount ? "M" : "", withCondition ? "cond" : "", "seq"},
                     {"final_seq", "iterations"});
    setGraphAttr(n, "body", body);
    return g;
}

TEST(LoopOpTest, TripCountCarriesSequenceAndConcatenatesScanOutputs) {
    const Value x = floats({2}, {3, 4});
    auto r =
        runGraph(appendingLoop(true, false),
                 {{"x", x}, {"seq", Value::sequence({}, DataType::Float)}, {"M", int64Scalar(3)}});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->at(0).isSequence());
    ASSERT_EQ(r->at(0).sequence().size(), 3u);
    EXPECT_EQ(valuesOf<float>(r->at(0).sequence()[2]), (std::vector<float>{3, 4}));
    const Tensor& iterations = r->at(1).tensor();
    EXPECT_EQ(iterations.shape(), (Shape{3}));
    EXPECT_EQ(valuesOf<std::int64_t>(iterations), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(LoopOpTest, ZeroIterationsKeepInitialValuesAndGiveEmptyScanOutputs) {
    for (auto [trips, condition] : {std::pair<std::int64_t, bool>{0, true}, {5, false}}) {
        auto r = runGraph(appendingLoop(true, true), {{"x", floats({1}, {1})},
                                                      {"seq", Value::sequence({}, DataType::Float)},
                                                      {"M", int64Scalar(trips)},
                                                      {"cond", boolScalar(condition)}});
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_TRUE(r->at(0).sequence().empty());
        EXPECT_EQ(r->at(1).tensor().shape(), (Shape{0}));
        EXPECT_EQ(r->at(1).tensor().dtype(), DataType::Int64);
    }
}

TEST(LoopOpTest, BodyConditionStopsTheLoop) {
    // cond_out = OptionalHasElement(empty optional) is false: one iteration although M = 10.
    TestGraph body("body");
    body.input("i").input("cond_in").input("v_in");
    auto& empty = body.node("Optional", {}, {"nothing"});
    {
        auto* a = empty.add_attribute();
        a->set_name("type");
        a->set_type(onnx::AttributeProto::TYPE_PROTO);
        a->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
    }
    body.node("OptionalHasElement", {"nothing"}, {"cond_out"});
    body.output("cond_out").output("v_in").output("i");
    TestGraph g;
    g.input("M").input("v").output("v_final").output("trace");
    setGraphAttr(g.node("Loop", {"M", "", "v"}, {"v_final", "trace"}), "body", body);
    auto r = runGraph(g, {{"M", int64Scalar(10)}, {"v", floats({1}, {5})}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{5}));
    EXPECT_EQ(valuesOf<std::int64_t>(r->at(1).tensor()), (std::vector<std::int64_t>{0}));
}

TEST(LoopOpTest, NestedBodiesResolveNamesTwoScopesUp) {
    // Outer Loop (M=2) whose body holds an If whose then-branch holds a Loop (M=3) appending the
    // top-level value x: 2 * 3 appends.
    TestGraph innerBody("inner_body");
    innerBody.input("j").input("c").input("s_in");
    innerBody.node("SequenceInsert", {"s_in", "x"}, {"s_out"});
    innerBody.output("c").output("s_out");
    TestGraph thenBranch("then_branch"), elseBranch("else_branch");
    setGraphAttr(thenBranch.node("Loop", {"three", "", "seq_in"}, {"seq_looped"}), "body",
                 innerBody);
    thenBranch.output("seq_looped");
    elseBranch.output("seq_in");
    TestGraph outerBody("outer_body");
    outerBody.input("i").input("cond_in").input("seq_in");
    auto& branch = outerBody.node("If", {"yes"}, {"seq_out"});
    setGraphAttr(branch, "then_branch", thenBranch);
    setGraphAttr(branch, "else_branch", elseBranch);
    outerBody.output("cond_in").output("seq_out");
    TestGraph g;
    g.input("x").input("yes").input("three").input("two").input("seq").output("result");
    setGraphAttr(g.node("Loop", {"two", "", "seq"}, {"result"}), "body", outerBody);
    auto r = runGraph(g, {{"x", floats({1}, {9})},
                          {"yes", boolScalar(true)},
                          {"three", int64Scalar(3)},
                          {"two", int64Scalar(2)},
                          {"seq", Value::sequence({}, DataType::Float)}});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->at(0).sequence().size(), 6u);
    EXPECT_EQ(valuesOf<float>(r->at(0).sequence()[5]), (std::vector<float>{9}));
}

TEST(LoopOpTest, TripCountMustBeOneValue) {
    auto r = runGraph(appendingLoop(true, false), {{"x", floats({1}, {1})},
                                                   {"seq", Value::sequence({}, DataType::Float)},
                                                   {"M", makeTensor<std::int64_t>({2}, {1, 2})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("Loop"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("trip count"), std::string::npos) << r.error().message;
}

TEST(LoopOpTest, ScanOutputThatChangesShapeIsAnError) {
    // The scan output is the growing sequence's concatenation: its shape changes every iteration.
    TestGraph body("body");
    body.input("i").input("cond_in").input("seq_in");
    body.node("SequenceInsert", {"seq_in", "x"}, {"seq_out"});
    auto& concat = body.node("ConcatFromSequence", {"seq_out"}, {"joined"});
    setAttr(concat, "axis", std::int64_t{0});
    body.output("cond_in").output("seq_out").output("joined");
    TestGraph g;
    g.input("x").input("seq").input("M").output("s").output("j");
    setGraphAttr(g.node("Loop", {"M", "", "seq"}, {"s", "j"}), "body", body);
    auto r = runGraph(g, {{"x", floats({1}, {1})},
                          {"seq", Value::sequence({}, DataType::Float)},
                          {"M", int64Scalar(2)}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("changes shape"), std::string::npos) << r.error().message;
}

// --- Scan -----------------------------------------------------------------------------------

// Scan body: the new state is the current element; the scan output is the element too. So the
// final state is the last element visited and the scan output lists the elements in visit order.
TestGraph lastElementBody() {
    TestGraph body("body");
    body.input("state_in").input("x_t");
    body.output("x_t").output("x_t");
    return body;
}

TEST(ScanOpTest, Opset9AxesAndDirections) {
    // x = [[1,2,3],[4,5,6]] scanned over axis 1 (columns), backwards; outputs stacked on axis 1.
    TestGraph g;
    g.input("init").input("x").output("last").output("columns");
    auto& n = g.node("Scan", {"init", "x"}, {"last", "columns"});
    setGraphAttr(n, "body", lastElementBody());
    setAttr(n, "num_scan_inputs", std::int64_t{1});
    setAttr(n, "scan_input_axes", std::vector<std::int64_t>{-1});
    setAttr(n, "scan_input_directions", std::vector<std::int64_t>{1});
    setAttr(n, "scan_output_axes", std::vector<std::int64_t>{1});
    auto r =
        runGraph(g, {{"init", floats({2}, {0, 0})}, {"x", floats({2, 3}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_TRUE(r) << r.error().message;
    // Visit order: column 2, 1, 0. Final state: column 0.
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{1, 4}));
    // Element t (a column) placed at index t of axis 1: [[3,2,1],[6,5,4]].
    EXPECT_EQ(r->at(1).tensor().shape(), (Shape{2, 3}));
    EXPECT_EQ(valuesOf<float>(r->at(1).tensor()), (std::vector<float>{3, 2, 1, 6, 5, 4}));
}

TEST(ScanOpTest, Opset9ReversedOutputDirection) {
    TestGraph g;
    g.input("init").input("x").output("last").output("rows");
    auto& n = g.node("Scan", {"init", "x"}, {"last", "rows"});
    setGraphAttr(n, "body", lastElementBody());
    setAttr(n, "num_scan_inputs", std::int64_t{1});
    setAttr(n, "scan_output_directions", std::vector<std::int64_t>{1});
    auto r =
        runGraph(g, {{"init", floats({2}, {0, 0})}, {"x", floats({3, 2}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{5, 6}));
    EXPECT_EQ(valuesOf<float>(r->at(1).tensor()), (std::vector<float>{5, 6, 3, 4, 1, 2}));
}

TEST(ScanOpTest, Opset9ZeroLengthSequence) {
    TestGraph body("body");
    body.input("state_in").input("x_t");
    body.output("state_in").tensorOutput("x_t", DataType::Float, {2});
    TestGraph g;
    g.input("init").input("x").output("last").output("rows");
    auto& n = g.node("Scan", {"init", "x"}, {"last", "rows"});
    setGraphAttr(n, "body", body);
    setAttr(n, "num_scan_inputs", std::int64_t{1});
    auto r = runGraph(g, {{"init", floats({2}, {7, 8})}, {"x", Tensor(DataType::Float, {0, 2})}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{7, 8}));
    EXPECT_EQ(r->at(1).tensor().shape(), (Shape{0, 2}));
}

TEST(ScanOpTest, Opset9InputsOfDifferentLengthsAreAnError) {
    TestGraph body("body");
    body.input("s").input("a").input("b");
    body.output("s");
    TestGraph g;
    g.input("init").input("a").input("b").output("s_final");
    auto& n = g.node("Scan", {"init", "a", "b"}, {"s_final"});
    setGraphAttr(n, "body", body);
    setAttr(n, "num_scan_inputs", std::int64_t{2});
    auto r = runGraph(
        g, {{"init", floats({1}, {0})}, {"a", floats({2}, {1, 2})}, {"b", floats({3}, {1, 2, 3})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("different sequence lengths"), std::string::npos)
        << r.error().message;
}

TEST(ScanOpTest, Opset8BatchesWithSequenceLengths) {
    // x: [batch 2, seq 3, 1]; lengths [1, 3]; forward.
    TestGraph g;
    g.input("lens").input("init").input("x").output("last").output("seen");
    auto& n = g.node("Scan", {"lens", "init", "x"}, {"last", "seen"});
    setGraphAttr(n, "body", lastElementBody());
    setAttr(n, "num_scan_inputs", std::int64_t{1});
    auto r = runGraph(g,
                      {{"lens", makeTensor<std::int32_t>({2}, {1, 3})},
                       {"init", floats({2, 1}, {0, 0})},
                       {"x", floats({2, 3, 1}, {1, 2, 3, 4, 5, 6})}},
                      8);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{1, 6}));
    EXPECT_EQ(r->at(1).tensor().shape(), (Shape{2, 3, 1}));
    // Steps past a batch item's length are zero.
    EXPECT_EQ(valuesOf<float>(r->at(1).tensor()), (std::vector<float>{1, 0, 0, 4, 5, 6}));
}

TEST(ScanOpTest, Opset8ReverseDirection) {
    TestGraph g;
    g.input("init").input("x").output("last").output("seen");
    auto& n = g.node("Scan", {"", "init", "x"}, {"last", "seen"});
    setGraphAttr(n, "body", lastElementBody());
    setAttr(n, "num_scan_inputs", std::int64_t{1});
    setAttr(n, "directions", std::vector<std::int64_t>{1});
    auto r = runGraph(g, {{"init", floats({1, 1}, {0})}, {"x", floats({1, 3, 1}, {1, 2, 3})}}, 8);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(valuesOf<float>(r->at(0).tensor()), (std::vector<float>{1}));
    EXPECT_EQ(valuesOf<float>(r->at(1).tensor()), (std::vector<float>{3, 2, 1}));
}

TEST(ScanOpTest, NumScanInputsMustFit) {
    TestGraph g;
    g.input("init").input("x").output("last");
    auto& n = g.node("Scan", {"init", "x"}, {"last"});
    setGraphAttr(n, "body", lastElementBody());
    setAttr(n, "num_scan_inputs", std::int64_t{3});
    auto r = runGraph(g, {{"init", floats({1}, {0})}, {"x", floats({1}, {1})}});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("num_scan_inputs"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace onnxlens::testing
