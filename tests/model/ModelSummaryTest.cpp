#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ModelTestSupport.h"
#include "onnxlens/model/ModelSummary.h"

using namespace onnxlens;
using namespace onnxlens::testing;
using ::testing::HasSubstr;

namespace {

LoadedModel loaded(const onnx::ModelProto& model, const std::filesystem::path& directory = ".") {
    LoadedModel m;
    m.path = "test.onnx";
    m.directory = directory;
    m.proto = std::make_shared<onnx::ModelProto>(model);
    return m;
}

ModelSummary summarize(const onnx::ModelProto& model,
                       const std::filesystem::path& directory = ".") {
    auto summary = summarizeModel(loaded(model, directory));
    EXPECT_TRUE(summary.ok()) << summary.error().message;
    return summary.ok() ? *summary : ModelSummary{};
}

}  // namespace

TEST(ModelSummary, HeaderFieldsAndOpsets) {
    auto model = addReluModel();
    model.set_domain("org.example");
    model.set_model_version(3);
    model.set_doc_string("a doc");
    auto* prop = model.add_metadata_props();
    prop->set_key("author");
    prop->set_value("tests");
    auto* ml = model.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(2);
    auto s = summarize(model);
    EXPECT_EQ(s.irVersion, 7);
    EXPECT_EQ(s.producerName, "onnxlens-tests");
    EXPECT_EQ(s.producerVersion, "1");
    EXPECT_EQ(s.domain, "org.example");
    EXPECT_EQ(s.modelVersion, 3);
    EXPECT_EQ(s.docString, "a doc");
    ASSERT_EQ(s.opsets.size(), 2u);
    EXPECT_EQ(s.opsets[0].domain, "");
    EXPECT_EQ(s.opsets[0].version, 13);
    EXPECT_EQ(s.opsets[1].domain, "ai.onnx.ml");
    ASSERT_EQ(s.metadata.size(), 1u);
    EXPECT_EQ(s.metadata[0].first, "author");
}

TEST(ModelSummary, InputsExcludeInitializersAndDimsAreTyped) {
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    setTensorType(graph.add_input(), onnx::TensorProto::FLOAT, {"4"});
    graph.mutable_input(1)->set_name("bias");  // an initializer listed as an input
    auto* mask = graph.add_input();
    mask->set_name("mask");
    setTensorType(mask, onnx::TensorProto::BOOL, {"?", "seq", "3"});
    auto* unranked = graph.add_input();
    unranked->set_name("any");
    unranked->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    auto s = summarize(model);
    ASSERT_EQ(s.inputs.size(), 3u);
    EXPECT_EQ(s.inputs[0].name, "x");
    EXPECT_EQ(s.inputs[0].dtype, "float32");
    ASSERT_EQ(s.inputs[0].shape.size(), 2u);
    EXPECT_EQ(s.inputs[0].shape[0].kind, DimSummary::Kind::Symbol);
    EXPECT_EQ(s.inputs[0].shape[0].symbol, "N");
    EXPECT_EQ(s.inputs[0].shape[1].kind, DimSummary::Kind::Value);
    EXPECT_EQ(s.inputs[0].shape[1].value, 4);
    EXPECT_EQ(s.inputs[1].dtype, "bool");
    EXPECT_EQ(s.inputs[1].shape[0].kind, DimSummary::Kind::Unknown);
    EXPECT_EQ(s.inputs[2].dtype, "int64");
    EXPECT_FALSE(s.inputs[2].hasShape);
    // x[0]=N, mask[0]=?, mask[1]=seq, y[0]=N
    ASSERT_EQ(s.dynamicAxes.size(), 4u);
    EXPECT_EQ(s.dynamicAxes[1].tensor, "mask");
    EXPECT_EQ(s.dynamicAxes[1].axis, 0);
    EXPECT_EQ(s.dynamicAxes[1].symbol, "");
    EXPECT_EQ(s.dynamicAxes[2].symbol, "seq");
    EXPECT_EQ(s.dynamicAxes[3].tensor, "y");
}

TEST(ModelSummary, HistogramSubgraphsAndNodeCounts) {
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    onnx::GraphProto branch;
    addNode(branch, "Identity", {"x"}, {"b"});
    addNode(branch, "Relu", {"b"}, {"c"});
    branch.add_output()->set_name("c");
    auto* node = addNode(graph, "If", {"cond"}, {"z"});
    for (const char* name : {"then_branch", "else_branch"}) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        *a->mutable_g() = branch;
    }
    auto* custom = addNode(graph, "FusedThing", {"x"}, {"w"});
    custom->set_domain("com.example");
    auto s = summarize(model);
    EXPECT_EQ(s.nodeCount, 4);
    EXPECT_EQ(s.nodeCountWithSubgraphs, 8);
    EXPECT_EQ(s.subgraphCount, 2);
    EXPECT_EQ(s.opHistogram.at("ai.onnx::Relu"), 1);
    EXPECT_EQ(s.opHistogram.at("ai.onnx::If"), 1);
    EXPECT_EQ(s.opHistogram.at("com.example::FusedThing"), 1);
    EXPECT_EQ(s.opHistogram.size(), 4u);
}

TEST(ModelSummary, InitializersCountExternalDataFromDims) {
    ScratchDir dir;
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    auto ext = floatTensor("big", {10, 10}, {});
    ext.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = ext.add_external_data();
    entry->set_key("location");
    entry->set_value("w.bin");
    *graph.add_initializer() = ext;
    onnx::TensorProto ints;
    ints.set_name("shape");
    ints.set_data_type(onnx::TensorProto::INT64);
    ints.add_dims(3);
    for (int i = 0; i < 3; ++i) ints.add_int64_data(i);
    *graph.add_initializer() = ints;
    auto s = summarize(model, dir.path());
    EXPECT_EQ(s.initializers.count, 3);
    EXPECT_EQ(s.initializers.parameters, 4 + 100 + 3);
    EXPECT_EQ(s.initializers.bytes, 16 + 400 + 24);
    EXPECT_EQ(s.initializers.externalCount, 1);
}

TEST(ModelSummary, CheckerAndShapeInference) {
    auto s = summarize(addReluModel());
    EXPECT_TRUE(s.checker.ok) << s.checker.message;
    EXPECT_TRUE(s.shapeInference.ok) << s.shapeInference.message;
    EXPECT_EQ(s.shapeInference.totalEdges, 2);
    EXPECT_EQ(s.shapeInference.knownEdges, 2);

    auto unknownOp = addReluModel();
    unknownOp.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
    auto u = summarize(unknownOp);
    EXPECT_FALSE(u.checker.ok);
    EXPECT_THAT(u.checker.message, HasSubstr("NoSuchOp"));
    EXPECT_EQ(u.shapeInference.totalEdges, 2);
    EXPECT_EQ(u.shapeInference.knownEdges, 1);  // y is declared; sum comes from an unknown op

    auto clash = addReluModel();  // y declared int64, inferred float32
    clash.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::INT64);
    auto c = summarize(clash);
    EXPECT_FALSE(c.shapeInference.ok);
    EXPECT_THAT(c.shapeInference.message, HasSubstr("type"));
}

TEST(ModelSummary, CheckerRunsWithoutBulkDataButStillSeesShapes) {
    auto model = addReluModel();
    auto& graph = *model.mutable_graph();
    std::vector<float> big(100000, 0.5f);
    *graph.add_initializer() = floatTensor("big", {100000}, big);
    onnx::TensorProto shape;
    shape.set_name("target");
    shape.set_data_type(onnx::TensorProto::INT64);
    shape.add_dims(2);
    shape.add_int64_data(2);
    shape.add_int64_data(-1);
    *graph.add_initializer() = shape;
    addNode(graph, "Reshape", {"big", "target"}, {"reshaped"});
    auto* out = graph.add_output();
    out->set_name("reshaped");
    setTensorType(out, onnx::TensorProto::FLOAT, {"2", "50000"});

    auto copy = copyWithoutBulkData(model);
    EXPECT_EQ(copy.graph().initializer(1).raw_data().size(), 4u);
    EXPECT_EQ(copy.graph().initializer(1).dims(0), 100000);
    EXPECT_EQ(copy.graph().initializer(2).int64_data_size(), 2);  // small: kept for inference
    EXPECT_EQ(copy.graph().initializer(0).raw_data().size(), 16u);

    auto s = summarize(model);
    EXPECT_TRUE(s.checker.ok) << s.checker.message;
    EXPECT_TRUE(s.shapeInference.ok) << s.shapeInference.message;
    EXPECT_EQ(s.shapeInference.knownEdges, 3);  // Reshape to [2, 50000] read the kept target
}

TEST(ModelSummary, SampleMnistModel) {
    const auto path =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources/samples/mnist_cnn/model.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no sample at " << path;
    auto model = loadModel(path);
    ASSERT_TRUE(model.ok()) << model.error().message;
    auto s = summarizeModel(*model);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s->inputs.size(), 1u);
    EXPECT_EQ(s->inputs[0].name, "image");
    EXPECT_EQ(s->inputs[0].shape[0].symbol, "batch");
    EXPECT_EQ(s->inputs[0].shape[3].value, 28);
    EXPECT_TRUE(s->checker.ok) << s->checker.message;
    EXPECT_TRUE(s->shapeInference.ok);
    EXPECT_EQ(s->shapeInference.knownEdges, s->shapeInference.totalEdges);
    EXPECT_EQ(s->opHistogram.at("ai.onnx::Conv"), 2);
}
