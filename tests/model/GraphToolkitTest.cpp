// The graph toolkit every pass, the summary, the view graph and the CLI share: domains and
// opsets, the graph index, the weights-free copies and shape inference cached per model state.
#include <gtest/gtest.h>

#include <filesystem>

#include "ModelTestSupport.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/StructuralCopy.h"
#include "onnxlens/model/ViewGraph.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values,
              const std::string& name, const std::vector<std::string>& dims,
              int type = onnx::TensorProto::FLOAT) {
    auto* v = values->Add();
    v->set_name(name);
    setTensorType(v, type, dims);
}

onnx::TensorProto zeros(const std::string& name, const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return floatTensor(name, dims, std::vector<float>(static_cast<std::size_t>(n), 0.0f));
}

// x [2,3] -> Relu -> a -> Neg -> c -> Add(c, c) -> d (output); If(cond) whose branch reads a;
// w (constant) -> Sigmoid -> s -> Tanh -> u; Constant -> k; x2 is an initializer and an input.
onnx::ModelProto indexedModel() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto& g = *m.mutable_graph();
    addValue(g.mutable_input(), "x", {"2", "3"});
    addValue(g.mutable_input(), "cond", {}, onnx::TensorProto::BOOL);
    addValue(g.mutable_input(), "x2", {"3"});
    *g.add_initializer() = zeros("x2", {3});
    *g.add_initializer() = zeros("w", {3});
    addNode(g, "Relu", {"x"}, {"a"});
    addNode(g, "Neg", {"a"}, {"c"});
    addNode(g, "Add", {"c", "c"}, {"d"});
    auto* branchIf = addNode(g, "If", {"cond"}, {"e"});
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto* attr = branchIf->add_attribute();
        attr->set_name(branch);
        attr->set_type(onnx::AttributeProto::GRAPH);
        auto* body = attr->mutable_g();
        body->set_name(branch);
        addNode(*body, "Identity", {"a"}, {std::string("t_") + branch});
        addValue(body->mutable_output(), std::string("t_") + branch, {"2", "3"});
    }
    addNode(g, "Sigmoid", {"w"}, {"s"});
    addNode(g, "Tanh", {"s"}, {"u"});
    auto* constant = addNode(g, "Constant", {}, {"k"});
    auto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = zeros("", {1});
    addNode(g, "Add", {"u", "k"}, {"v"});
    addValue(g.mutable_output(), "d", {"2", "3"});
    addValue(g.mutable_output(), "e", {"2", "3"});
    addValue(g.mutable_output(), "v", {"3"});
    return m;
}

}  // namespace

TEST(OnnxDomains, DefaultDomainHasTwoSpellings) {
    EXPECT_TRUE(isDefaultDomain(""));
    EXPECT_TRUE(isDefaultDomain("ai.onnx"));
    EXPECT_FALSE(isDefaultDomain("ai.onnx.ml"));
    EXPECT_FALSE(isDefaultDomain("com.microsoft"));
    EXPECT_EQ(canonicalDomain("ai.onnx"), "");
    EXPECT_EQ(canonicalDomain("com.onnxlens"), "com.onnxlens");
    EXPECT_EQ(displayDomain(""), "ai.onnx");
    EXPECT_EQ(displayDomain("ai.onnx.ml"), "ai.onnx.ml");
    onnx::NodeProto relu;
    relu.set_op_type("Relu");
    relu.set_domain("ai.onnx");
    EXPECT_TRUE(isOnnxOp(relu, "Relu"));
    relu.set_domain("com.onnxlens");
    EXPECT_FALSE(isOnnxOp(relu, "Relu"));
}

TEST(OnnxDomains, OpsetImportsByCanonicalDomain) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* onnxImport = m.add_opset_import();
    onnxImport->set_domain("ai.onnx");
    onnxImport->set_version(13);
    auto* ml = m.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);
    EXPECT_EQ(defaultOpset(m), 13);
    EXPECT_EQ(opsetVersion(m, "", 0), 13);
    EXPECT_EQ(opsetVersion(m, "ai.onnx.ml", 0), 3);
    EXPECT_EQ(opsetVersion(m, "com.microsoft", -1), -1);
    EXPECT_EQ(opsetImports(m), (std::map<std::string, int>{{"", 13}, {"ai.onnx.ml", 3}}));
    onnx::ModelProto old;
    old.set_ir_version(2);  // before IR 3 a model imports no default opset and means opset 1
    EXPECT_EQ(opsetImports(old), (std::map<std::string, int>{{"", 1}}));
    EXPECT_EQ(defaultOpset(old), 1);
}

TEST(GraphIndex, ProducersConsumersAndSubgraphReads) {
    const auto m = indexedModel();
    const GraphIndex index(m.graph());
    EXPECT_EQ(index.producer("a"), 0);
    EXPECT_EQ(index.producer("x"), -1);
    EXPECT_EQ(index.consumers("c"), (std::vector<int>{2, 2}));  // read twice by one Add
    EXPECT_EQ(index.readCount("c"), 2);
    EXPECT_EQ(index.soleConsumer("c"), -1);
    EXPECT_EQ(index.exclusiveConsumerCount("c"), 2);
    // `a` has one consumer in this graph and one inside the If's branches: not exclusive.
    EXPECT_EQ(index.consumers("a"), (std::vector<int>{1}));
    EXPECT_TRUE(index.readInSubgraph("a"));
    EXPECT_EQ(index.readCount("a"), 3);
    EXPECT_EQ(index.soleConsumer("a"), -1);
    EXPECT_EQ(index.exclusiveProducer("a"), -1);
    EXPECT_EQ(index.exclusiveConsumerCount("a"), -1);
    // s is read by Tanh only.
    EXPECT_EQ(index.soleConsumer("s"), 5);
    EXPECT_EQ(index.exclusiveProducer("s"), 4);
    // Graph outputs count as reads.
    EXPECT_TRUE(index.isGraphOutput("d"));
    EXPECT_EQ(index.readCount("d"), 1);
    EXPECT_EQ(index.soleConsumer("d"), -1);
    EXPECT_EQ(index.exclusiveConsumerCount("d"), -1);
    // Constants: initializers that are not inputs, and Constant nodes' values.
    EXPECT_NE(index.constantInitializer("w"), nullptr);
    EXPECT_EQ(index.constantInitializer("x2"), nullptr);  // overridable at run time
    EXPECT_TRUE(index.isGraphInput("x2"));
    ASSERT_NE(index.constant("k"), nullptr);
    EXPECT_EQ(index.constant("k")->dims_size(), 1);
    EXPECT_EQ(index.constant("s"), nullptr);
    EXPECT_TRUE(hasSubgraph(m.graph().node(3)));
    EXPECT_FALSE(hasSubgraph(m.graph().node(0)));
}

TEST(StructuralCopy, LargeTensorsKeepTheirShapeButNotTheirBytes) {
    auto m = indexedModel();
    *m.mutable_graph()->add_initializer() = zeros("big", {100, 100});
    const auto stripped = copyWithoutBulkData(m);
    const auto& inits = stripped.graph().initializer();
    ASSERT_EQ(inits.size(), 3);
    EXPECT_EQ(inits[1].raw_data().size(), 12u);  // w: 12 bytes, kept
    EXPECT_EQ(inits[2].name(), "big");
    EXPECT_EQ(inits[2].dims_size(), 2);
    EXPECT_EQ(inits[2].raw_data().size(), 4u);  // one element's placeholder
    EXPECT_EQ(stripped.graph().node_size(), m.graph().node_size());

    const auto structure = copyStructure(m);
    ASSERT_EQ(structure.graph().initializer_size(), 3);
    for (const auto& init : structure.graph().initializer()) {
        EXPECT_FALSE(init.has_raw_data()) << init.name();
        EXPECT_GT(init.dims_size(), 0) << init.name();
    }
    // The original keeps its weights.
    EXPECT_EQ(m.graph().initializer(2).raw_data().size(), 40000u);
    EXPECT_EQ(structure.graph().node_size(), m.graph().node_size());
}

TEST(ShapeInference, CacheInfersOncePerModelState) {
    const auto m = indexedModel();
    ShapeInferenceCache cache;
    EXPECT_EQ(cache.peek(), nullptr);
    const auto before = shapeInferenceRunCount();
    const auto first = cache.get(m);
    const auto second = cache.get(m);
    EXPECT_EQ(first, second);
    EXPECT_EQ(shapeInferenceRunCount() - before, 1u);
    EXPECT_TRUE(first->ok()) << first->message();
    EXPECT_EQ(first->staticDimsOf("c"), (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(first->staticDimsOf("w"), (std::vector<std::int64_t>{3}));
    ASSERT_NE(first->typeOf("a"), nullptr);
    EXPECT_EQ(first->typeOf("a")->tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    EXPECT_EQ(first->typeOf("nothing"), nullptr);
    cache.invalidate();
    EXPECT_EQ(cache.peek(), nullptr);
    cache.get(m);
    EXPECT_EQ(shapeInferenceRunCount() - before, 2u);
}

TEST(ShapeInference, SymbolicDimsKeepTheirNames) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto& g = *m.mutable_graph();
    addValue(g.mutable_input(), "x", {"batch", "4"});
    addNode(g, "Relu", {"x"}, {"y"});
    g.add_output()->set_name("y");
    const auto shapes = inferShapes(m);
    auto dims = shapes->dimsOf("y");
    ASSERT_TRUE(dims);
    EXPECT_EQ(*dims, (std::vector<InferredDim>{{-1, "batch"}, {4, {}}}));
    EXPECT_FALSE(shapes->staticDimsOf("y"));
}

TEST(ShapeInference, NodesBreakingTheirSchemaSkipInference) {
    auto m = indexedModel();
    m.mutable_graph()->mutable_node(0)->add_input("extra");  // Relu takes one input
    const auto shapes = inferShapes(m);
    EXPECT_FALSE(shapes->ok());
    EXPECT_TRUE(shapes->skipped());
    EXPECT_EQ(shapes->message().rfind("skipped: ", 0), 0u) << shapes->message();
    EXPECT_EQ(shapes->typeOf("c"), nullptr);  // nothing inferred
}

// What the window does for one opened model (ModelDocument.cpp): the summary and the view graph
// share one shape inference.
TEST(ShapeInference, SummaryAndViewGraphOfAnOpenedModelInferOnce) {
    const std::filesystem::path path =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources/samples/mnist_cnn/model.onnx";
    auto loaded = loadModel(path);
    ASSERT_TRUE(loaded) << loaded.error().message;
    ASSERT_NE(loaded->shapes, nullptr);
    const auto before = shapeInferenceRunCount();
    auto summary = summarizeModel(*loaded);
    ASSERT_TRUE(summary);
    EXPECT_TRUE(summary->shapeInference.ok);
    ViewGraphOptions options;
    options.shapes = loaded->shapes->get(*loaded->proto);
    auto view = buildViewGraph(loaded->proto, options);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->inferred, options.shapes->modelPointer());
    EXPECT_EQ(shapeInferenceRunCount() - before, 1u);
}
