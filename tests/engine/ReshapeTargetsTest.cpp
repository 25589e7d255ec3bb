// reshape-targets-from-input-dims: the head split and merge PyTorch exports with dynamic axes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) become Reshapes with constant targets, and
// compute the same at every input size.
#include <gtest/gtest.h>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/GraphIndex.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

void addDynamicInput(onnx::GraphProto& g, const std::string& name, std::int64_t lastDim) {
    auto* in = g.add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_param("sequence");
    tt->mutable_shape()->add_dim()->set_dim_value(lastDim);
}

// Unsqueeze(Gather(Shape(source), k), axes [0]) as `name`, the way torch 1.13 writes x.size(k).
void addSizeOf(onnx::GraphProto& g, const std::string& source, std::int64_t k,
               const std::string& name) {
    addNode(g, "Shape", {source}, {name + "/shape"});
    addInitializer(g, name + "/k", Tensor::scalar<std::int64_t>(k));
    addNode(g, "Gather", {name + "/shape", name + "/k"}, {name + "/dim"});
    addInitializer(g, name + "/axes", Tensor::fromVector<std::int64_t>({1}, {0}));
    addNode(g, "Unsqueeze", {name + "/dim", name + "/axes"}, {name});
}

onnx::NodeProto* addConcat(onnx::GraphProto& g, std::vector<std::string> parts,
                           const std::string& output) {
    auto* concat = addNode(g, "Concat", std::move(parts), {output});
    auto* axis = concat->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    return concat;
}

onnx::NodeProto* addTranspose(onnx::GraphProto& g, const std::string& input,
                              const std::string& output) {
    auto* transpose = addNode(g, "Transpose", {input}, {output});
    auto* perm = transpose->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t p : {0, 2, 1, 3}) perm->add_ints(p);
    return transpose;
}

// x [batch, sequence, 8] -> + bias -> view(size(0), size(1), 2, 4) -> transpose(1, 2) ->
// transpose back -> view(size(0) of the pre-transpose value, its size(2), 8): a head split and
// merge.
onnx::ModelProto headSplitAndMerge() {
    auto m = emptyModel(14);
    auto& g = *m.mutable_graph();
    addDynamicInput(g, "x", 8);
    addInitializer(g, "bias", Tensor::fromVector<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}));
    addNode(g, "Add", {"x", "bias"}, {"q"});
    addSizeOf(g, "q", 0, "q0");
    addSizeOf(g, "q", 1, "q1");
    addInitializer(g, "heads", Tensor::fromVector<std::int64_t>({2}, {2, 4}));
    addConcat(g, {"q0", "q1", "heads"}, "split_shape");
    addNode(g, "Reshape", {"q", "split_shape"}, {"split"});
    addTranspose(g, "split", "heads_first");
    addNode(g, "Relu", {"heads_first"}, {"context"});
    addTranspose(g, "context", "merged");
    // The merge reads the dims of `context` ([batch, 2, sequence, 4]) before its Transpose.
    addSizeOf(g, "context", 0, "c0");
    addSizeOf(g, "context", 2, "c2");
    addInitializer(g, "width", Tensor::fromVector<std::int64_t>({1}, {8}));
    addConcat(g, {"c0", "c2", "width"}, "merge_shape");
    addNode(g, "Reshape", {"merged", "merge_shape"}, {"y"});
    g.add_output()->set_name("y");
    return m;
}

std::vector<std::int64_t> targetOf(const onnx::ModelProto& m, const std::string& reshapeOutput) {
    const GraphIndex index(m.graph());
    for (const auto& n : m.graph().node())
        if (n.op_type() == "Reshape" && n.output(0) == reshapeOutput) {
            const auto* t = index.constant(n.input(1));
            if (!t) return {};
            return engine::tensorFromProto(*t, {}).toInt64Vector();
        }
    return {};
}

}  // namespace

TEST(ReshapeTargets, HeadSplitAndMergeBecomeConstantTargetsAndTheChainsGo) {
    auto m = headSplitAndMerge();
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::reshapeTargetsFromInputDims(copy), 2);
    EXPECT_EQ(targetOf(copy, "split"), (std::vector<std::int64_t>{0, 0, 2, 4}));
    EXPECT_EQ(targetOf(copy, "y"), (std::vector<std::int64_t>{0, 0, 8}));
    const auto counts = opCounts(copy);
    for (const char* gone : {"Shape", "Gather", "Unsqueeze", "Concat"})
        EXPECT_EQ(counts.count(gone), 0u) << gone;
    EXPECT_EQ(counts.at("Reshape"), 2);
    // The axes and indices the chains read went with them.
    for (const auto& init : copy.graph().initializer())
        EXPECT_EQ(init.name().find("/k"), std::string::npos) << init.name();

    // The same results at several sizes, optimized (every pass) and as written.
    for (const auto& [batch, sequence] : {std::pair{1, 1}, {2, 5}, {3, 16}}) {
        std::vector<float> values(static_cast<std::size_t>(batch * sequence * 8));
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<float>(i % 11) * 0.75f - 3.0f;
        const std::map<std::string, Value> feeds{
            {"x", Value(Tensor::fromVector<float>({batch, sequence, 8}, values))}};
        const auto expected = runModelAsWritten(m, feeds);
        const auto rewritten = runModelAsWritten(copy, feeds);
        ASSERT_EQ(expected.size(), 1u);
        ASSERT_EQ(rewritten.size(), 1u);
        EXPECT_EQ(rewritten[0].tensor().shape(), (Shape{batch, sequence, 8}));
        EXPECT_TRUE(tensorsClose(rewritten[0].tensor(), expected[0].tensor(), {0.0, 0.0}));
    }
}

TEST(ReshapeTargets, DimsOfAnotherValueOrAnotherPositionStayComputed) {
    auto m = headSplitAndMerge();
    auto& g = *m.mutable_graph();
    // The split's second entry now reads q's dim 0 again (position 1): not its own dim there.
    for (auto& n : *g.mutable_node())
        if (n.op_type() == "Concat" && n.output(0) == "split_shape") n.set_input(1, "q0");
    // The merge reads x's dims instead of the transposed value's: another value.
    for (auto& n : *g.mutable_node())
        if (n.op_type() == "Shape" && n.input(0) == "context") n.set_input(0, "x");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::reshapeTargetsFromInputDims(copy), 0);
    EXPECT_EQ(copy.graph().node_size(), m.graph().node_size());
}

TEST(ReshapeTargets, AllowZeroReshapeIsLeftAlone) {
    auto m = headSplitAndMerge();
    for (auto& n : *m.mutable_graph()->mutable_node())
        if (n.op_type() == "Reshape") {
            auto* a = n.add_attribute();
            a->set_name("allowzero");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(1);
        }
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::reshapeTargetsFromInputDims(copy), 0);
}
