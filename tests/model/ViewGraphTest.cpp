#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "SyntheticModels.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens {
namespace {

const ViewNode* nodeNamed(const ViewGraph& view, const std::string& name) {
    int index = view.findNodeByName(name);
    return index < 0 ? nullptr : &view.nodes[index];
}

const ViewGroup* groupAt(const ViewGraph& view, const std::string& path) {
    for (const auto& g : view.groups)
        if (g.path == path) return &g;
    return nullptr;
}

TEST(ViewGraph, FoldsInitializersIntoRowsWithSchemaNames) {
    auto view = buildViewGraph(testing::makeSmallCnn());
    ASSERT_TRUE(view) << view.error().message;
    const ViewNode* conv = nodeNamed(*view, "conv1");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->category, NodeCategory::Layer);
    std::vector<std::string> rows;
    for (const auto& r : conv->rows) rows.push_back(r.label + " " + r.text);
    EXPECT_NE(std::find(rows.begin(), rows.end(), "W <8x1x3x3>"), rows.end());
    EXPECT_NE(std::find(rows.begin(), rows.end(), "B <8>"), rows.end());
    EXPECT_NE(std::find(rows.begin(), rows.end(), "kernel_shape 3x3"), rows.end());
    // Initializers are rows, not nodes or edges.
    for (const auto& e : view->edges) EXPECT_FALSE(view->tensors[e.tensor].folded);
    EXPECT_EQ(view->operatorCount, 6);
}

TEST(ViewGraph, InputsAndOutputsAreNodesAndEdgesCarryInferredShapes) {
    auto view = buildViewGraph(testing::makeSmallCnn());
    ASSERT_TRUE(view);
    const ViewNode* input = nodeNamed(*view, "input");
    ASSERT_NE(input, nullptr);
    EXPECT_EQ(input->kind, ViewNode::Kind::Input);
    const ViewNode* output = nodeNamed(*view, "probabilities");
    ASSERT_NE(output, nullptr);
    EXPECT_EQ(output->kind, ViewNode::Kind::Output);
    bool sawConvOut = false;
    for (const auto& e : view->edges) {
        const auto& t = view->tensors[e.tensor];
        if (t.name == "conv_out") {
            sawConvOut = true;
            // Computed by shape inference: 28 - 3 + 1 = 26, batch stays symbolic.
            EXPECT_EQ(t.type.shapeText(), "batchx8x26x26");
            EXPECT_TRUE(t.type.hasSymbolicDim());
            EXPECT_TRUE(t.type.dims[0].isSymbolic());
            EXPECT_EQ(t.type.dims[2].value, 26);
        }
        if (t.name == "pool_out") {
            EXPECT_EQ(t.type.shapeText(), "batchx8x13x13");
        }
    }
    EXPECT_TRUE(sawConvOut);
    EXPECT_TRUE(view->shapeInferenceError.empty()) << view->shapeInferenceError;
}

TEST(ViewGraph, NameScopesBecomeNestedGroupsAndSingleChildScopesAreHoisted) {
    auto view = buildViewGraph(testing::makeTransformerLike(3));
    ASSERT_TRUE(view) << view.error().message;
    const ViewGroup* encoder = groupAt(*view, "/encoder");
    const ViewGroup* layer1 = groupAt(*view, "/encoder/layer.1");
    const ViewGroup* attention = groupAt(*view, "/encoder/layer.1/attention");
    ASSERT_NE(encoder, nullptr);
    ASSERT_NE(layer1, nullptr);
    ASSERT_NE(attention, nullptr);
    EXPECT_EQ(view->groups[layer1->parent].path, "/encoder");
    EXPECT_EQ(encoder->children.size(), 3u);
    EXPECT_EQ(layer1->nodeCount, 33);
    EXPECT_EQ(view->groups[0].nodeCount, view->operatorCount);
    // "/pooler" holds one node: no group for it.
    EXPECT_EQ(groupAt(*view, "/pooler"), nullptr);
    const ViewNode* identity = nodeNamed(*view, "/pooler/Identity");
    ASSERT_NE(identity, nullptr);
    EXPECT_EQ(identity->group, 0);
}

TEST(ViewGraph, LevelsRouteCrossGroupTensorsThroughPortsAndLabelThemOnce) {
    auto view = buildViewGraph(testing::makeTransformerLike(2));
    ASSERT_TRUE(view);
    int layer0 = -1, layer1 = -1;
    for (int g = 0; g < static_cast<int>(view->groups.size()); ++g) {
        if (view->groups[g].path == "/encoder/layer.0") layer0 = g;
        if (view->groups[g].path == "/encoder/layer.1") layer1 = g;
    }
    ASSERT_GE(layer0, 0);
    ASSERT_GE(layer1, 0);
    int encoder = view->groups[layer0].parent;
    // At the encoder's level, layer.0 -> layer.1 carries the hidden state, labelled.
    const auto& level = view->levels[encoder];
    bool found = false;
    for (const auto& e : level.edges) {
        const auto& tail = level.units[e.tail];
        const auto& head = level.units[e.head];
        if (tail == ViewUnitRef{ViewUnitRef::Kind::Group, layer0} &&
            head == ViewUnitRef{ViewUnitRef::Kind::Group, layer1}) {
            found = true;
            EXPECT_TRUE(e.labelled);
        }
    }
    EXPECT_TRUE(found);
    // Inside layer.1, that tensor arrives through an in-port.
    const auto& inner = view->levels[layer1];
    int inPorts = 0;
    for (const auto& u : inner.units) inPorts += u.kind == ViewUnitRef::Kind::InPort;
    EXPECT_GE(inPorts, 1);
    for (const auto& e : inner.edges)
        if (inner.units[e.tail].kind == ViewUnitRef::Kind::InPort) {
            EXPECT_FALSE(e.labelled);
        }
    // Every edge of the model is labelled at exactly one level.
    std::size_t labelled = 0;
    for (const auto& l : view->levels)
        for (const auto& e : l.edges) labelled += e.labelled;
    EXPECT_LE(labelled, view->edges.size());
    EXPECT_GT(labelled, 0u);
}

TEST(ViewGraph, ConstantNodesAreFoldedWithTheirValues) {
    auto model = testing::makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"n", "6"});
    auto* c = testing::addNode(g, "Constant", "shape_const", {}, {"shape"});
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = testing::makeInt64Initializer("", {-1, 2, 3});
    testing::addNode(g, "Reshape", "reshape", {"x", "shape"}, {"y"});
    *g.add_output() = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {});
    auto view = buildViewGraph(model);
    ASSERT_TRUE(view);
    EXPECT_EQ(nodeNamed(*view, "shape_const"), nullptr);
    const ViewNode* reshape = nodeNamed(*view, "reshape");
    ASSERT_NE(reshape, nullptr);
    ASSERT_EQ(reshape->rows.size(), 1u);
    EXPECT_EQ(reshape->rows[0].kind, ViewRow::Kind::Constant);
    EXPECT_EQ(reshape->rows[0].label, "shape");
    EXPECT_EQ(reshape->rows[0].text, "= [-1, 2, 3]");
}

TEST(ViewGraph, IfBodiesAreGroupsSeeingTheOuterScope) {
    auto model = testing::makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = testing::makeValueInfo("cond", onnx::TensorProto::BOOL, {});
    *g.add_input() = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"3"});
    auto* node = testing::addNode(g, "If", "branch", {"cond"}, {"y"});
    for (const char* name : {"then_branch", "else_branch"}) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* body = a->mutable_g();
        body->set_name(name);
        testing::addNode(*body, std::string(name) == "then_branch" ? "Relu" : "Neg",
                         std::string(name) + "_op", {"x"}, {std::string(name) + "_y"});
        *body->add_output() =
            testing::makeValueInfo(std::string(name) + "_y", onnx::TensorProto::FLOAT, {"3"});
    }
    *g.add_output() = testing::makeValueInfo("y", onnx::TensorProto::FLOAT, {"3"});
    auto view = buildViewGraph(model);
    ASSERT_TRUE(view) << view.error().message;
    const ViewGroup* then = groupAt(*view, "/branch.then_branch");
    ASSERT_NE(then, nullptr);
    EXPECT_EQ(then->kind, ViewGroup::Kind::Subgraph);
    const ViewNode* relu = nodeNamed(*view, "then_branch_op");
    ASSERT_NE(relu, nullptr);
    // x comes from the outer graph's input node.
    bool outer = false;
    for (const auto& e : view->edges)
        if (e.to == view->findNodeByName("then_branch_op") &&
            view->nodes[e.from].kind == ViewNode::Kind::Input)
            outer = true;
    EXPECT_TRUE(outer);
}

TEST(ViewGraph, LocalFunctionCallsAreGroupsHoldingTheBody) {
    auto model = testing::makeModelShell();
    auto* opset = model->add_opset_import();
    opset->set_domain("custom");
    opset->set_version(1);
    auto* f = model->add_functions();
    f->set_name("Swish");
    f->set_domain("custom");
    f->add_input("X");
    f->add_output("Y");
    auto* o = f->add_opset_import();
    o->set_domain("");
    o->set_version(13);
    auto* s = f->add_node();
    s->set_op_type("Sigmoid");
    s->add_input("X");
    s->add_output("S");
    auto* m = f->add_node();
    m->set_op_type("Mul");
    m->add_input("X");
    m->add_input("S");
    m->add_output("Y");
    auto& g = *model->mutable_graph();
    *g.add_input() = testing::makeValueInfo("x", onnx::TensorProto::FLOAT, {"4"});
    auto* call = testing::addNode(g, "Swish", "act", {"x"}, {"y"});
    call->set_domain("custom");
    testing::addNode(g, "Relu", "after", {"y"}, {"z"});
    *g.add_output() = testing::makeValueInfo("z", onnx::TensorProto::FLOAT, {"4"});
    auto view = buildViewGraph(model);
    ASSERT_TRUE(view) << view.error().message;
    int functionGroup = -1;
    for (int i = 0; i < static_cast<int>(view->groups.size()); ++i)
        if (view->groups[i].kind == ViewGroup::Kind::Function) functionGroup = i;
    ASSERT_GE(functionGroup, 0);
    EXPECT_EQ(view->groups[functionGroup].title, "act");
    EXPECT_EQ(view->groups[functionGroup].nodeCount, 2);
    // The Relu after the call consumes the Mul inside the function.
    int relu = view->findNodeByName("after");
    bool fromBody = false;
    for (const auto& e : view->edges)
        if (e.to == relu && view->nodes[e.from].opType == "Mul") fromBody = true;
    EXPECT_TRUE(fromBody);
}

TEST(ViewGraph, LargeFlatLevelsAreSplitIntoRanges) {
    auto view = buildViewGraph(testing::makeFlatGraph(1000));
    ASSERT_TRUE(view) << view.error().message;
    const auto& root = view->groups[0];
    // input, ceil(1000 / 150) = 7 ranges, output.
    ASSERT_EQ(root.children.size(), 9u);
    EXPECT_EQ(root.children.front().kind, ViewUnitRef::Kind::Node);
    EXPECT_EQ(root.children.back().kind, ViewUnitRef::Kind::Node);
    int operators = 0;
    for (std::size_t i = 1; i + 1 < root.children.size(); ++i) {
        const auto& range = view->groups[root.children[i].index];
        EXPECT_EQ(range.kind, ViewGroup::Kind::Range);
        EXPECT_EQ(range.depth, 1);
        EXPECT_LE(range.children.size(), 150u);
        operators += range.nodeCount;
    }
    EXPECT_EQ(operators, 1000);
    EXPECT_EQ(view->groups[root.children[1].index].title, "Relu_0 … Sub_149");
    // The chain crosses from one range to the next at the root level.
    EXPECT_FALSE(view->levels[0].edges.empty());
}

TEST(ViewGraph, BuildsEveryBackendTestModel) {
    // Robustness: every model of the ONNX backend test data builds a view graph.
    int built = 0;
    for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
        std::filesystem::path dir = std::filesystem::path(ONNXLENS_TESTDATA_DIR) / suite;
        if (!std::filesystem::exists(dir)) continue;
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            auto file = entry.path() / "model.onnx";
            std::ifstream in(file, std::ios::binary);
            if (!in) continue;
            auto model = std::make_shared<onnx::ModelProto>();
            if (!model->ParseFromIstream(&in)) continue;
            auto view = buildViewGraph(model);
            EXPECT_TRUE(view) << file << ": " << view.error().message;
            ++built;
        }
    }
    EXPECT_GT(built, 100);
}

// Rows of a node as "label text" strings, with their kinds.
std::vector<std::pair<ViewRow::Kind, std::string>> rowsOf(const ViewNode& node) {
    std::vector<std::pair<ViewRow::Kind, std::string>> rows;
    for (const auto& r : node.rows) rows.emplace_back(r.kind, r.label + " " + r.text);
    return rows;
}

TEST(ViewGraph, ConstantChainsAndSharedWeightsFoldIntoTheirReaders) {
    const int layers = 6;
    auto view = buildViewGraph(testing::makeMaskedDecoder(layers));
    ASSERT_TRUE(view) << view.error().message;
    // Constant, the weight-sharing Identity nodes and the Cast of a Constant are not boxes:
    // 4 mask operators + 5 per layer remain (counted by hand from the model's construction).
    EXPECT_EQ(view->operatorCount, 4 + 5 * layers);
    for (const auto& n : view->nodes) {
        EXPECT_NE(n.opType, "Constant");
        EXPECT_NE(n.opType, "Identity");
        if (n.opType == "Cast") {
            EXPECT_EQ(n.name, "/mask/Cast");  // reads a graph input: stays
        }
    }
    const ViewNode* norm = nodeNamed(*view, "/layers.3/norm/Mul");
    ASSERT_NE(norm, nullptr);
    // The shared weight is a row of its reader, with the initializer's shape.
    auto rows = rowsOf(*norm);
    EXPECT_NE(std::find(rows.begin(), rows.end(),
                        std::make_pair(ViewRow::Kind::Constant, std::string("B <8>"))),
              rows.end());
    const ViewNode* reshape = nodeNamed(*view, "/layers.3/Reshape");
    ASSERT_NE(reshape, nullptr);
    ASSERT_FALSE(reshape->rows.empty());
    EXPECT_EQ(reshape->rows[0].kind, ViewRow::Kind::Constant);
    EXPECT_EQ(reshape->rows[0].label, "shape");
    // No edge carries a folded tensor.
    for (const auto& e : view->edges) EXPECT_FALSE(view->tensors[e.tensor].folded);
}

TEST(ViewGraph, FoldingConstantsCanBeTurnedOff) {
    ViewGraphOptions options;
    options.foldConstants = false;
    auto view = buildViewGraph(testing::makeMaskedDecoder(3), options);
    ASSERT_TRUE(view) << view.error().message;
    // Every node of the file is drawn: 3 mask Constants + 4 mask operators, and per layer an
    // Identity, a Constant, a Cast and the 5 operators.
    EXPECT_EQ(view->operatorCount, 3 + 4 + 3 * 8);
    EXPECT_NE(nodeNamed(*view, "Identity_1"), nullptr);
    EXPECT_NE(nodeNamed(*view, "/layers.1/Constant"), nullptr);
}

TEST(ViewGraph, AMaskReadByEveryLayerIsAStubAtEachReader) {
    const int layers = 5;
    auto view = buildViewGraph(testing::makeMaskedDecoder(layers));
    ASSERT_TRUE(view) << view.error().message;
    int mask = -1;
    for (int t = 0; t < static_cast<int>(view->tensors.size()); ++t)
        if (view->tensors[t].name == "mask") mask = t;
    ASSERT_GE(mask, 0);
    EXPECT_TRUE(view->tensors[mask].stub);
    EXPECT_EQ(view->nodes[view->tensors[mask].producer].name, "/mask/Unsqueeze");
    for (int l = 0; l < layers; ++l) {
        const ViewNode* add = nodeNamed(*view, "/layers." + std::to_string(l) + "/attention/Add");
        ASSERT_NE(add, nullptr);
        auto stub = std::find_if(add->rows.begin(), add->rows.end(),
                                 [](const ViewRow& r) { return r.kind == ViewRow::Kind::Stub; });
        ASSERT_NE(stub, add->rows.end()) << l;
        EXPECT_EQ(stub->tensor, mask);
        EXPECT_EQ(stub->label, "B");  // Add's second input
        EXPECT_EQ(stub->text, "\xe2\x86\x90 Unsqueeze");
    }
    // No edge draws the mask; the residual stream still flows layer to layer.
    for (const auto& e : view->edges) EXPECT_NE(e.tensor, mask);
    const int layer0 = view->findNodeByName("/layers.0/Add");
    const int layer1 = view->findNodeByName("/layers.1/norm/Mul");
    EXPECT_TRUE(std::any_of(view->edges.begin(), view->edges.end(),
                            [&](const ViewEdge& e) { return e.from == layer0 && e.to == layer1; }));
    // The residual Add (two groups read it: the next layer's norm and residual Add are in
    // different groups, but only two) is no stub.
    EXPECT_FALSE(view->tensors[view->nodes[layer0].outputs[0]].stub);

    ViewGraphOptions edgesOnly;
    edgesOnly.stubReaderGroups = 0;
    auto drawn = buildViewGraph(testing::makeMaskedDecoder(layers), edgesOnly);
    ASSERT_TRUE(drawn);
    EXPECT_EQ(
        std::count_if(drawn->edges.begin(), drawn->edges.end(),
                      [&](const ViewEdge& e) { return drawn->tensors[e.tensor].name == "mask"; }),
        layers);
}

TEST(ViewGraph, DimsShapeInferenceCouldNotComputeShowAsUnknown) {
    onnx::TypeProto type;
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    type.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    shape->add_dim()->set_dim_param("batch");
    shape->add_dim()->set_dim_param("unk__4");
    shape->add_dim()->set_dim_value(768);
    const ViewTensorType t = tensorTypeOf(type);
    EXPECT_EQ(t.shapeText(), "batchx?x768");
    EXPECT_FALSE(t.dims[1].isSymbolic());
}

TEST(ViewGraph, FilesWithoutScopesGetBlocksFromTheirRepeatedStructure) {
    const int layers = 80;
    auto model = testing::makeMaskedDecoder(layers);
    // As older exporters write them: no scopes, nodes named by op type and position.
    for (int i = 0; i < model->graph().node_size(); ++i) {
        auto* node = model->mutable_graph()->mutable_node(i);
        node->set_name(node->op_type() + "_" + std::to_string(i));
    }
    ViewGraphOptions options;
    options.minBlockOperators = 4;  // this model's layers are 5 operators
    auto view = buildViewGraph(model, options);
    ASSERT_TRUE(view) << view.error().message;
    std::vector<const ViewGroup*> blocks;
    for (const auto& ref : view->groups[0].children)
        if (ref.kind == ViewUnitRef::Kind::Group) blocks.push_back(&view->groups[ref.index]);
    // One block per layer, give or take the ends (a block starts wherever the repetition
    // does), in order, five operators each.
    ASSERT_GE(blocks.size(), static_cast<std::size_t>(layers - 1));
    ASSERT_LE(blocks.size(), static_cast<std::size_t>(layers));
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        EXPECT_EQ(blocks[k]->title, "block." + std::to_string(k));
        EXPECT_EQ(blocks[k]->nodeCount, 5);
    }
    // No Range groups: the level holds the blocks.
    for (const auto& g : view->groups) EXPECT_NE(g.kind, ViewGroup::Kind::Range);
    // With 8-operator blocks required, this chain of 5-operator layers is left alone.
    auto plain = buildViewGraph(model);
    ASSERT_TRUE(plain);
    for (const auto& g : plain->groups) EXPECT_NE(g.kind, ViewGroup::Kind::Scope);
}

TEST(ViewGraph, RunsOfAlikeLayersCanFoldIntoOneRepeatGroup) {
    ViewGraphOptions options;
    options.foldRepeats = true;
    auto view = buildViewGraph(testing::makeMaskedDecoder(6), options);
    ASSERT_TRUE(view) << view.error().message;
    std::vector<const ViewGroup*> repeats;
    for (const auto& g : view->groups)
        if (g.kind == ViewGroup::Kind::Repeat) repeats.push_back(&g);
    ASSERT_EQ(repeats.size(), 1u);
    EXPECT_EQ(repeats[0]->repeats, 6);
    EXPECT_EQ(repeats[0]->parent, 0);
    EXPECT_EQ(repeats[0]->title, "layers.0 \xe2\x80\xa6 layers.5");
    ASSERT_EQ(repeats[0]->children.size(), 6u);
    for (int l = 0; l < 6; ++l)
        EXPECT_EQ(view->groups[repeats[0]->children[l].index].path, "/layers." + std::to_string(l));
    EXPECT_EQ(repeats[0]->nodeCount, 5 * 6);
    // Off by default.
    auto plain = buildViewGraph(testing::makeMaskedDecoder(6));
    ASSERT_TRUE(plain);
    for (const auto& g : plain->groups) EXPECT_NE(g.kind, ViewGroup::Kind::Repeat);
}

TEST(ViewGraph, OnnxRuntimeContribOperatorsGetTheirFamilies) {
    // The com.microsoft operators of ONNX Runtime's optimizer, quantizers and LLM builders are
    // coloured by family like the standard ones, not left as "other".
    EXPECT_EQ(categoryOfOperator("GroupQueryAttention", "com.microsoft"), NodeCategory::Layer);
    EXPECT_EQ(categoryOfOperator("MatMulNBits", "com.microsoft"), NodeCategory::Layer);
    EXPECT_EQ(categoryOfOperator("SkipSimplifiedLayerNormalization", "com.microsoft"),
              NodeCategory::Normalization);
    EXPECT_EQ(categoryOfOperator("EmbedLayerNormalization", "com.microsoft"),
              NodeCategory::Normalization);
    EXPECT_EQ(categoryOfOperator("BiasSplitGelu", "com.microsoft"), NodeCategory::Activation);
    EXPECT_EQ(categoryOfOperator("QLinearGlobalAveragePool", "com.microsoft"), NodeCategory::Pool);
    EXPECT_EQ(categoryOfOperator("QLinearAdd", "com.microsoft"), NodeCategory::Arithmetic);
    EXPECT_EQ(categoryOfOperator("GatherBlockQuantized", "com.microsoft"), NodeCategory::Tensor);
    EXPECT_EQ(categoryOfOperator("NotAnOperator", "com.microsoft"), NodeCategory::Other);
}

}  // namespace
}  // namespace onnxlens
