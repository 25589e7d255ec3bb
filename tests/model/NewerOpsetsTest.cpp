// Models of ai.onnx opsets newer than the linked onnx library (1.12: opset 17): the checker
// verdict, shape inference and the view graph. Shapes and verdicts here are worked out by hand
// from the operator specs.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>

#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/ShapeInferenceAnyOpset.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens {
namespace {

void setTensorType(onnx::ValueInfoProto* info, const std::string& name,
                   std::initializer_list<std::string> dims) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = tensor->mutable_shape();
    for (const auto& d : dims) {
        auto* dim = shape->add_dim();
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
            dim->set_dim_value(std::stoll(d));
        else
            dim->set_dim_param(d);
    }
}

// x [batch, 3, 4] -> ReduceMean-18 (axes input [2], keepdims) -> Mish-18 -> Relu -> Split-18
// (num_outputs 2 on axis 1 of size 3: 2 and 1) -> a, b.
onnx::ModelProto opset18Model(int reduceInputs = 2) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(18);
    auto* graph = model.mutable_graph();
    graph->set_name("g");
    setTensorType(graph->add_input(), "x", {"batch", "3", "4"});
    auto* axes = graph->add_initializer();
    axes->set_name("axes");
    axes->set_data_type(onnx::TensorProto::INT64);
    axes->add_dims(1);
    axes->add_int64_data(2);
    auto* reduce = graph->add_node();
    reduce->set_op_type("ReduceMean");
    reduce->set_name("reduce");
    reduce->add_input("x");
    for (int i = 1; i < reduceInputs; ++i) reduce->add_input("axes");
    reduce->add_output("mean");
    auto* mish = graph->add_node();
    mish->set_op_type("Mish");
    mish->set_name("mish");
    mish->add_input("mean");
    mish->add_output("m");
    auto* relu = graph->add_node();
    relu->set_op_type("Relu");
    relu->set_name("relu");
    relu->add_input("m");
    relu->add_output("r");
    auto* split = graph->add_node();
    split->set_op_type("Split");
    split->set_name("split");
    split->add_input("r");
    split->add_output("a");
    split->add_output("b");
    auto* axis = split->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
    auto* parts = split->add_attribute();
    parts->set_name("num_outputs");
    parts->set_type(onnx::AttributeProto::INT);
    parts->set_i(2);
    setTensorType(graph->add_output(), "a", {"batch", "2", "1"});
    setTensorType(graph->add_output(), "b", {"batch", "1", "1"});
    return model;
}

const onnx::TypeProto* typeOf(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& v : graph.value_info())
        if (v.name() == name) return &v.type();
    return nullptr;
}

std::string dimsOf(const onnx::TypeProto* type) {
    if (!type || !type->tensor_type().has_shape()) return "?";
    std::string text;
    for (const auto& d : type->tensor_type().shape().dim()) {
        if (!text.empty()) text += "x";
        text += d.has_dim_value() ? std::to_string(d.dim_value())
                                  : (d.has_dim_param() ? d.dim_param() : std::string("?"));
    }
    return text;
}

TEST(NewerOpsets, ValidOpset18ModelPassesWithANote) {
    const auto verdict = runChecker(opset18Model());
    EXPECT_TRUE(verdict.ok) << verdict.message;
    EXPECT_EQ(verdict.nodesCheckedByOnnxlens, 3);  // ReduceMean-18, Mish-18, Split-18
    EXPECT_NE(verdict.note.find("knows opsets up to 17; 3 nodes use newer versions"),
              std::string::npos)
        << verdict.note;
    EXPECT_TRUE(verdict.newerOpsetWarning.empty());
}

TEST(NewerOpsets, WrongInputCountOfANewerNodeFails) {
    const auto verdict = runChecker(opset18Model(3));
    EXPECT_FALSE(verdict.ok);
    EXPECT_NE(verdict.message.find("(ReduceMean-18): has 3 inputs, the operator takes 1 to 2"),
              std::string::npos)
        << verdict.message;
}

TEST(NewerOpsets, ShapesReachEveryEdgeThroughNewerNodes) {
    auto copy = copyWithoutBulkData(opset18Model());
    const auto outcome = inferShapesAnyOpset(copy);
    EXPECT_GT(outcome.valuesShapedByOnnxlens, 0);
    // ReduceMean over axis 2 keeping it, Mish the same, Relu by onnx, Split 3 -> 2 + 1.
    EXPECT_EQ(dimsOf(typeOf(copy.graph(), "mean")), "batchx3x1");
    EXPECT_EQ(dimsOf(typeOf(copy.graph(), "m")), "batchx3x1");
    EXPECT_EQ(dimsOf(typeOf(copy.graph(), "r")), "batchx3x1");
    // Nodes keep their domain in the inferred copy.
    for (const auto& node : copy.graph().node()) EXPECT_EQ(node.domain(), "");
    const auto summary = runShapeInference(opset18Model());
    EXPECT_EQ(summary.knownEdges, summary.totalEdges);
    EXPECT_EQ(summary.totalEdges, 5);
}

TEST(NewerOpsets, ViewGraphShowsShapesOnNewerEdges) {
    auto model = std::make_shared<onnx::ModelProto>(opset18Model());
    auto view = buildViewGraph(model);
    ASSERT_TRUE(view) << view.error().message;
    EXPECT_EQ(dimsOf(typeOf(view->inferred->graph(), "m")), "batchx3x1");
}

TEST(NewerOpsets, OpsetBeyondEveryTableIsAWarningNotAFailure) {
    auto model = opset18Model();
    model.mutable_opset_import(0)->set_version(99);
    const auto verdict = runChecker(model);
    EXPECT_TRUE(verdict.ok) << verdict.message;
    EXPECT_NE(verdict.newerOpsetWarning.find("opset 99 is newer than this build knows"),
              std::string::npos);
}

}  // namespace
}  // namespace onnxlens
