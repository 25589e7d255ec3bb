// The model edits of issue 32 (model/ModelEdits.h): each edit on small models built here, each
// error of the part 5 (name in use, undefined cut, wrong attribute type or range, dim <= 0,
// initializer of another shape, unreachable opset) with the model byte for byte unchanged after.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <filesystem>
#include <set>

#include "SyntheticModels.h"
#include "onnxlens/model/ModelEdits.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/TensorFile.h"

namespace onnxlens {
namespace {

using testing::addIntAttribute;
using testing::addNode;
using testing::makeFloatInitializer;
using testing::makeInt64Initializer;
using testing::makeModelShell;
using testing::makeSmallCnn;
using testing::makeValueInfo;

constexpr int kFloat = onnx::TensorProto::FLOAT;

std::string bytesOf(const onnx::ModelProto& model) { return model.SerializeAsString(); }

// Applies an edit that must fail: the error names the edit and holds `fragment`, and the model is
// unchanged.
void expectRefused(onnx::ModelProto& model, const ModelEdit& edit, const std::string& fragment) {
    const std::string before = bytesOf(model);
    auto status = applyModelEdit(model, edit);
    ASSERT_FALSE(status) << edit.describe();
    EXPECT_NE(status.error().message.find(edit.describe()), std::string::npos)
        << status.error().message;
    EXPECT_NE(status.error().message.find(fragment), std::string::npos) << status.error().message;
    EXPECT_EQ(bytesOf(model), before) << edit.describe() << " changed the model";
}

void apply(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport* report = nullptr) {
    auto status = applyModelEdit(model, edit, {}, report);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_NO_THROW(onnx::checker::check_model(model)) << edit.describe();
}

const onnx::TensorProto* initializer(const onnx::ModelProto& model, const std::string& name) {
    for (const auto& t : model.graph().initializer())
        if (t.name() == name) return &t;
    return nullptr;
}

std::vector<std::string> nodeNames(const onnx::ModelProto& model) {
    std::vector<std::string> names;
    for (const auto& n : model.graph().node()) names.push_back(n.name());
    return names;
}

const onnx::TensorShapeProto_Dimension& dim(const onnx::ValueInfoProto& v, int axis) {
    return v.type().tensor_type().shape().dim(axis);
}

TEST(ModelEdit, SetDimFixedAndSymbolic) {
    auto model = *makeSmallCnn();
    apply(model, setDimEdit("input", 0, "4"));
    EXPECT_EQ(dim(model.graph().input(0), 0).dim_value(), 4);
    apply(model, setDimEdit("input", -1, "width"));
    EXPECT_EQ(dim(model.graph().input(0), 3).dim_param(), "width");
    apply(model, setDimEdit("probabilities", 0, "n"));
    EXPECT_EQ(dim(model.graph().output(0), 0).dim_param(), "n");
    EXPECT_EQ(setDimEdit("input", 0, "4").describe(), "set dim 0 of 'input' to 4");
}

TEST(ModelEdit, SetDimRefusals) {
    auto model = *makeSmallCnn();
    expectRefused(model, setDimEdit("input", 0, "0"), "positive number");
    expectRefused(model, setDimEdit("input", 0, "-3"), "positive number");
    expectRefused(model, setDimEdit("input", 4, "2"), "out of range");
    expectRefused(model, setDimEdit("conv_out", 0, "2"), "not an input or output");
    expectRefused(model, setDimEdit("input", 0, "99999999999999999999"), "positive number");
    expectRefused(model, setDimEdit("input", 0, ""), "positive number");
}

// x [2, 3, 4] -> Reshape [2, 12] -> MatMul W [12, 5] -> y; token [1, 5] -> Expand [2, 5];
// z = y + expanded token; bias [1, 5] reshaped to [1, 5] stays (not batched).
onnx::ModelProto bakedBatchModel() {
    auto model = *makeModelShell(13);
    auto& g = *model.mutable_graph();
    g.set_name("baked");
    *g.add_input() = makeValueInfo("x", kFloat, {"2", "3", "4"});
    *g.add_initializer() = makeInt64Initializer("flat_shape", {2, 12});
    *g.add_initializer() = makeFloatInitializer("w", {12, 5});
    *g.add_initializer() = makeFloatInitializer("token", {1, 5});
    *g.add_initializer() = makeInt64Initializer("expand_shape", {2, 5});
    *g.add_initializer() = makeInt64Initializer("bias_shape", {2, 5});
    *g.add_initializer() = makeFloatInitializer("bias", {10});
    addNode(g, "Reshape", "/Reshape", {"x", "flat_shape"}, {"flat"});
    addNode(g, "MatMul", "/MatMul", {"flat", "w"}, {"y"});
    addNode(g, "Expand", "/Expand", {"token", "expand_shape"}, {"tokens"});
    addNode(g, "Add", "/Add", {"y", "tokens"}, {"sum"});
    // A constant reshaped to [2, 5] that does not depend on the batch: its 2 is not the batch.
    addNode(g, "Reshape", "/BiasReshape", {"bias", "bias_shape"}, {"bias2"});
    addNode(g, "Mul", "/Mul", {"sum", "bias2"}, {"z"});
    *g.add_output() = makeValueInfo("z", kFloat, {"2", "5"});
    *g.add_value_info() = makeValueInfo("flat", kFloat, {"2", "12"});
    return model;
}

TEST(ModelEdit, MakeBatchDynamicRepairsBakedConstants) {
    auto model = bakedBatchModel();
    EXPECT_EQ(exportedBatch(model), 2);
    auto baked = findBakedBatchConstants(model, 2);
    ASSERT_EQ(baked.size(), 2u);
    EXPECT_EQ(baked[0].describe(), "Reshape '/Reshape' 'flat_shape' [2, 12]");
    EXPECT_EQ(baked[1].opType, "Expand");

    ModelEditReport report;
    apply(model, makeBatchDynamicEdit("batch"), &report);
    EXPECT_EQ(dim(model.graph().input(0), 0).dim_param(), "batch");
    EXPECT_EQ(dim(model.graph().output(0), 0).dim_param(), "batch");
    EXPECT_EQ(model.graph().value_info_size(), 0);  // 'flat' [2, 12] is inferred again
    // The Reshape copies the input's dim 0; the Expand takes the batch from x's shape.
    const onnx::NodeProto* reshape = nullptr;
    const onnx::NodeProto* expand = nullptr;
    const onnx::NodeProto* biasReshape = nullptr;
    for (const auto& n : model.graph().node()) {
        if (n.name() == "/Reshape") reshape = &n;
        if (n.name() == "/Expand") expand = &n;
        if (n.name() == "/BiasReshape") biasReshape = &n;
    }
    ASSERT_TRUE(reshape && expand && biasReshape);
    const auto* shape = initializer(model, reshape->input(1));
    ASSERT_NE(shape, nullptr);
    EXPECT_EQ(std::vector<std::int64_t>(shape->int64_data().begin(), shape->int64_data().end()),
              (std::vector<std::int64_t>{0, 12}));
    EXPECT_EQ(initializer(model, "flat_shape"), nullptr);  // no longer read: removed
    EXPECT_EQ(biasReshape->input(1), "bias_shape");
    EXPECT_EQ(initializer(model, expand->input(1)), nullptr);  // computed now
    EXPECT_EQ(report.nodesAdded, 3);                           // Shape, Gather, Concat
    EXPECT_EQ(model.graph().node(0).op_type(), "Shape");
    // Shape inference follows the symbol through the repaired graph.
    auto shapes = inferShapes(model);
    auto zDims = shapes->dimsOf("z");
    ASSERT_TRUE(zDims.has_value()) << shapes->message();
    EXPECT_EQ((*zDims)[1].value, 5);
    EXPECT_TRUE(findBakedBatchConstants(model, 2).empty());
    EXPECT_EQ(exportedBatch(model), 0);

    expectRefused(model, makeBatchDynamicEdit("batch"), "nothing to make dynamic");
    auto fresh = bakedBatchModel();
    expectRefused(fresh, makeBatchDynamicEdit("7"), "must be a name");
}

// x [N, 4] -> Relu -> a -> If(cond) whose then branch reads a (outer scope) -> y.
onnx::ModelProto subgraphModel() {
    auto model = *makeModelShell(13);
    auto& g = *model.mutable_graph();
    g.set_name("with_if");
    *g.add_input() = makeValueInfo("x", kFloat, {"N", "4"});
    *g.add_input() = makeValueInfo("cond", onnx::TensorProto::BOOL, {});
    addNode(g, "Relu", "relu", {"x"}, {"a"});
    auto* node = addNode(g, "If", "if", {"cond"}, {"y"});
    for (const char* name : {"then_branch", "else_branch"}) {
        auto* attr = node->add_attribute();
        attr->set_name(name);
        attr->set_type(onnx::AttributeProto::GRAPH);
        auto& b = *attr->mutable_g();
        b.set_name(name);
        const std::string out = std::string(name) + "_out";
        addNode(b, std::string(name) == "then_branch" ? "Neg" : "Abs", std::string(name) + "_op",
                {"a"}, {out});
        *b.add_output() = makeValueInfo(out, kFloat, {"N", "4"});
    }
    *g.add_output() = makeValueInfo("y", kFloat, {"N", "4"});
    return model;
}

TEST(ModelEdit, RenameTensorThroughSubgraphs) {
    auto model = subgraphModel();
    apply(model, renameEdit("a", "activated"));
    EXPECT_EQ(model.graph().node(0).output(0), "activated");
    for (const auto& attr : model.graph().node(1).attribute())
        EXPECT_EQ(attr.g().node(0).input(0), "activated") << attr.name();
    apply(model, renameEdit("x", "pixels"));
    EXPECT_EQ(model.graph().input(0).name(), "pixels");
    EXPECT_EQ(model.graph().node(0).input(0), "pixels");
    apply(model, renameEdit("y", "result"));
    EXPECT_EQ(model.graph().output(0).name(), "result");
    EXPECT_EQ(model.graph().node(1).output(0), "result");
}

TEST(ModelEdit, RenameRefusesANameInUse) {
    auto model = subgraphModel();
    expectRefused(model, renameEdit("a", "x"), "already used by a tensor");
    // A name used only inside a subgraph is in use too.
    expectRefused(model, renameEdit("a", "then_branch_out"), "already used");
    expectRefused(model, renameEdit("relu", "if", RenameTarget::Node), "already used by a node");
    expectRefused(model, renameEdit("nothing", "b"), "no node or tensor 'nothing'");
    expectRefused(model, renameEdit("a", ""), "empty");
}

TEST(ModelEdit, RenameNode) {
    auto model = subgraphModel();
    apply(model, renameEdit("relu", "/block/Relu"));
    EXPECT_EQ(model.graph().node(0).name(), "/block/Relu");
    apply(model, renameEdit("then_branch_op", "negate", RenameTarget::Node));
    EXPECT_EQ(model.graph().node(1).attribute(0).g().node(0).name(), "negate");
}

TEST(ModelEdit, AddAndRemoveOutputs) {
    auto model = *makeSmallCnn();
    apply(model, addOutputEdit("relu_out"));
    ASSERT_EQ(model.graph().output_size(), 2);
    const auto& added = model.graph().output(1);
    EXPECT_EQ(added.name(), "relu_out");
    ASSERT_EQ(added.type().tensor_type().shape().dim_size(), 4);
    EXPECT_EQ(dim(added, 0).dim_param(), "batch");
    EXPECT_EQ(dim(added, 1).dim_value(), 8);
    EXPECT_EQ(dim(added, 2).dim_value(), 26);
    expectRefused(model, addOutputEdit("relu_out"), "already an output");
    expectRefused(model, addOutputEdit("missing"), "no tensor 'missing'");
    apply(model, removeOutputEdit("probabilities"));
    ASSERT_EQ(model.graph().output_size(), 1);
    expectRefused(model, removeOutputEdit("relu_out"), "only output");
    expectRefused(model, removeOutputEdit("logits"), "not an output");
    // The nodes after relu_out are dead now: prune removes them and their weights.
    ModelEditReport report;
    apply(model, pruneEdit(), &report);
    EXPECT_EQ(nodeNames(model), (std::vector<std::string>{"conv1", "relu1"}));
    EXPECT_EQ(report.initializersRemoved, 2);
    EXPECT_EQ(initializer(model, "fc.weight"), nullptr);
}

TEST(ModelEdit, PruneRemovesDeadNodesAndUnusedInitializers) {
    auto model = *makeSmallCnn();
    auto& g = *model.mutable_graph();
    *g.add_initializer() = makeFloatInitializer("unused", {3});
    addNode(g, "Neg", "dead", {"relu_out"}, {"dead_out"});
    addNode(g, "Abs", "dead2", {"dead_out"}, {"dead_out2"});
    ModelEditReport report;
    apply(model, pruneEdit(), &report);
    EXPECT_EQ(report.nodesRemoved, 2);
    EXPECT_EQ(report.initializersRemoved, 1);
    EXPECT_EQ(model.graph().node_size(), 6);
    EXPECT_EQ(initializer(model, "unused"), nullptr);
    // Nothing left to prune.
    apply(model, pruneEdit(), &report);
    EXPECT_EQ(report.nodesRemoved, 0);
}

TEST(ModelEdit, ExtractKeepsOnlyWhatTheOutputsNeed) {
    auto model = *makeSmallCnn();
    const std::string fcWeight = initializer(model, "fc.weight")->raw_data();
    ModelEditReport report;
    apply(model, extractEdit({"relu_out"}, {"logits"}), &report);
    EXPECT_EQ(nodeNames(model), (std::vector<std::string>{"pool1", "flatten", "fc"}));
    ASSERT_EQ(model.graph().input_size(), 1);
    EXPECT_EQ(model.graph().input(0).name(), "relu_out");
    EXPECT_EQ(dim(model.graph().input(0), 1).dim_value(), 8);
    EXPECT_EQ(model.graph().output(0).name(), "logits");
    EXPECT_EQ(model.graph().initializer_size(), 2);
    EXPECT_EQ(initializer(model, "conv.weight"), nullptr);
    // The 54 KB weight came back from the working copy's stub intact.
    ASSERT_NE(initializer(model, "fc.weight"), nullptr);
    EXPECT_EQ(initializer(model, "fc.weight")->raw_data(), fcWeight);
    EXPECT_EQ(report.nodesRemoved, 3);
}

TEST(ModelEdit, ExtractRefusesACutThatLeavesATensorUndefined) {
    auto model = *makeSmallCnn();
    // No inputs: the model's own input is needed and not among them.
    expectRefused(model, extractEdit({}, {"logits"}), "leaves 'input' undefined");
    // z = Add(a, b) with only a as input.
    auto& g = *model.mutable_graph();
    addNode(g, "Add", "add", {"relu_out", "conv_out"}, {"twice"});
    expectRefused(model, extractEdit({"relu_out"}, {"twice"}), "leaves 'input' undefined");
    expectRefused(model, extractEdit({"nope"}, {"logits"}), "no tensor 'nope'");
    expectRefused(model, extractEdit({"relu_out"}, {}), "no output");
    // The whole model between its own input and output extracts to itself.
    auto whole = *makeSmallCnn();
    apply(whole, extractEdit({"input"}, {"probabilities"}));
    EXPECT_EQ(whole.graph().node_size(), 6);
}

TEST(ModelEdit, DeleteNodeBypassesWhenAnInputMatches) {
    auto model = *makeSmallCnn();
    ModelEditReport report;
    apply(model, deleteNodeEdit("relu1"), &report);
    EXPECT_EQ(nodeNames(model),
              (std::vector<std::string>{"conv1", "pool1", "flatten", "fc", "softmax"}));
    EXPECT_EQ(model.graph().node(1).input(0), "conv_out");
    // The output's producer is bypassed: Gemm now writes the output, whose name stays.
    apply(model, deleteNodeEdit("softmax"));
    EXPECT_EQ(model.graph().output(0).name(), "probabilities");
    EXPECT_EQ(model.graph().node(model.graph().node_size() - 1).output(0), "probabilities");
}

TEST(ModelEdit, DeleteNodeCutsAndPrunesOtherwise) {
    auto model = *makeSmallCnn();
    expectRefused(model, deleteNodeEdit("flatten"), "cuts every output");
    expectRefused(model, deleteNodeEdit("nobody"), "no node 'nobody'");
    apply(model, addOutputEdit("relu_out"));
    ModelEditReport report;
    apply(model, deleteNodeEdit("flatten"), &report);
    EXPECT_EQ(nodeNames(model), (std::vector<std::string>{"conv1", "relu1"}));
    ASSERT_EQ(model.graph().output_size(), 1);
    EXPECT_EQ(model.graph().output(0).name(), "relu_out");
    EXPECT_EQ(initializer(model, "fc.weight"), nullptr);
}

TEST(ModelEdit, SetAttributeCheckedAgainstTheSchema) {
    auto model = *makeSmallCnn();
    apply(model, setAttributeEdit("pool1", "strides", "[1, 1]"));
    const auto& pool = model.graph().node(2);
    for (const auto& a : pool.attribute())
        if (a.name() == "strides") {
            EXPECT_EQ(a.ints_size(), 2);
        }
    apply(model, setAttributeEdit("softmax", "axis", "-1"));
    apply(model, setAttributeEdit("fc", "alpha", "0.5"));
    expectRefused(model, setAttributeEdit("fc", "alpha", "half"), "FLOAT");
    // One stride for a 2-D convolution: shape inference refuses it.
    expectRefused(model, setAttributeEdit("conv1", "strides", "2"), "shape inference");
}

TEST(ModelEdit, SetAttributeRefusals) {
    auto model = *makeSmallCnn();
    expectRefused(model, setAttributeEdit("conv1", "kernel_shape", "[a, b]"), "INTS");
    expectRefused(model, setAttributeEdit("conv1", "group", "0"), "must be positive");
    // One input channel cannot be split in two groups.
    expectRefused(model, setAttributeEdit("conv1", "group", "2"), "group 2 does not divide");
    expectRefused(model, setAttributeEdit("flatten", "axis", "9"), "out of range");
    expectRefused(model, setAttributeEdit("conv1", "colour", "1"), "no attribute 'colour'");
    expectRefused(model, setAttributeEdit("conv1", "pads", "[-1, 0, 0, 0]"), "not be negative");
    expectRefused(model, setAttributeEdit("ghost", "axis", "1"), "no node 'ghost'");
}

TEST(ModelEdit, SetInitializerFromFiles) {
    const auto dir = std::filesystem::temp_directory_path() / "onnxlens_model_edits_test";
    std::filesystem::create_directories(dir);
    auto model = *makeSmallCnn();
    onnx::TensorProto bias = makeFloatInitializer("", {8}, 0.5f);
    ASSERT_TRUE(writeNpyFile(dir / "bias.npy", bias));
    ASSERT_TRUE(writeTensorPbFile(dir / "bias.pb", bias));
    apply(model, setInitializerEdit("conv.bias", dir / "bias.npy"));
    EXPECT_EQ(initializer(model, "conv.bias")->raw_data(), bias.raw_data());
    apply(model, setInitializerEdit("conv.bias", dir / "bias.pb"));
    ModelEditOptions options;
    options.baseDirectory = dir;
    ASSERT_TRUE(applyModelEdit(model, setInitializerEdit("conv.bias", "bias.npy"), options));

    ASSERT_TRUE(writeNpyFile(dir / "wrong_shape.npy", makeFloatInitializer("", {9})));
    expectRefused(model, setInitializerEdit("conv.bias", dir / "wrong_shape.npy"),
                  "shape 9 differs from the initializer's 8");
    ASSERT_TRUE(
        writeNpyFile(dir / "wrong_type.npy", makeInt64Initializer("", {1, 2, 3, 4, 5, 6, 7, 8})));
    expectRefused(model, setInitializerEdit("conv.bias", dir / "wrong_type.npy"),
                  "int64, the initializer float32");
    expectRefused(model, setInitializerEdit("conv.bias", dir / "missing.npy"), "missing.npy");
    expectRefused(model, setInitializerEdit("nope", dir / "bias.npy"), "no initializer 'nope'");
    // A large weight replaced: the new data wins over the stub of the working copy.
    auto weight = makeFloatInitializer("", {10, 8 * 13 * 13}, 0.25f);
    apply(model, setInitializerEdit("fc.weight", std::make_shared<onnx::TensorProto>(weight)));
    EXPECT_EQ(initializer(model, "fc.weight")->raw_data(), weight.raw_data());
    std::filesystem::remove_all(dir);
}

TEST(ModelEdit, Metadata) {
    auto model = *makeSmallCnn();
    apply(model, setMetadataEdit("author", "me"));
    apply(model, setMetadataEdit("author", "you"));
    ASSERT_EQ(model.metadata_props_size(), 1);
    EXPECT_EQ(model.metadata_props(0).value(), "you");
    apply(model, setMetadataEdit("doc_string", "a small CNN"));
    apply(model, setMetadataEdit("producer_name", "onnxlens"));
    EXPECT_EQ(model.doc_string(), "a small CNN");
    EXPECT_EQ(model.producer_name(), "onnxlens");
    apply(model, setMetadataEdit("author", ""));
    EXPECT_EQ(model.metadata_props_size(), 0);
    expectRefused(model, setMetadataEdit("author", ""), "no metadata entry");
}

TEST(ModelEdit, OpsetConversion) {
    auto model = *makeSmallCnn();
    const std::string fcWeight = initializer(model, "fc.weight")->raw_data();
    ModelEditReport report;
    apply(model, convertOpsetEdit(15), &report);
    EXPECT_EQ(defaultOpset(model), 15);
    ASSERT_NE(initializer(model, "fc.weight"), nullptr);
    EXPECT_EQ(initializer(model, "fc.weight")->raw_data(), fcWeight);
    expectRefused(model, convertOpsetEdit(99), "outside what onnx's converter knows");
    // onnx 1.12's converter has no adapter taking Relu from opset 13 down to 12: its refusal is
    // the error, as it gives it.
    auto old = *makeSmallCnn();
    expectRefused(old, convertOpsetEdit(11), "No Adapter To Version $12 for Relu");
    expectRefused(model, convertOpsetEdit(0), "outside");
}

TEST(ModelEdit, OpsetConversionKeepsExternalData) {
    // onnx's converter drops external-data fields (its IR has none): fc.weight, stored in a .data
    // file, must come back pointing at the same bytes, not empty.
    auto model = *makeSmallCnn();
    auto* weight = model.mutable_graph()->mutable_initializer();
    onnx::TensorProto* fc = nullptr;
    for (auto& t : *weight)
        if (t.name() == "fc.weight") fc = &t;
    ASSERT_NE(fc, nullptr);
    const auto length = fc->raw_data().size();
    fc->clear_raw_data();
    fc->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = fc->add_external_data();
    entry->set_key("location");
    entry->set_value("model.onnx.data");
    entry = fc->add_external_data();
    entry->set_key("length");
    entry->set_value(std::to_string(length));
    const onnx::TensorProto before = *fc;
    ASSERT_TRUE(applyModelEdit(model, convertOpsetEdit(15)));
    EXPECT_EQ(defaultOpset(model), 15);
    const onnx::TensorProto* after = initializer(model, "fc.weight");
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->SerializeAsString(), before.SerializeAsString());
}

TEST(ModelEdit, PreviewChangesNothing) {
    auto model = *makeSmallCnn();
    const std::string before = bytesOf(model);
    ModelEditReport report;
    ASSERT_TRUE(previewModelEdit(model, extractEdit({"relu_out"}, {"logits"}), {}, &report));
    EXPECT_FALSE(report.changes.empty());
    EXPECT_EQ(bytesOf(model), before);
    EXPECT_FALSE(previewModelEdit(model, renameEdit("input", "logits")));
}

TEST(ModelEdit, KindNamesRoundTrip) {
    for (auto kind :
         {ModelEditKind::SetDim, ModelEditKind::MakeBatchDynamic, ModelEditKind::Rename,
          ModelEditKind::AddOutput, ModelEditKind::RemoveOutput, ModelEditKind::Prune,
          ModelEditKind::Extract, ModelEditKind::DeleteNode, ModelEditKind::SetAttribute,
          ModelEditKind::SetInitializer, ModelEditKind::SetMetadata, ModelEditKind::ConvertOpset}) {
        ModelEditKind parsed = ModelEditKind::Prune;
        ASSERT_TRUE(parseModelEditKind(modelEditKindName(kind), parsed));
        EXPECT_EQ(parsed, kind);
    }
    ModelEditKind unused;
    EXPECT_FALSE(parseModelEditKind("explode", unused));
}

}  // namespace
}  // namespace onnxlens
