// Edit scripts (workflows/EditScript.h): every edit through JSON and back, the script's errors,
// applying in order and stopping at the first failing edit, the cleanup passes, and the batch
// check after make-batch-dynamic on models that keep or mix their samples.
#include <gtest/gtest.h>

#include "GraphBuilding.h"
#include "onnxlens/workflows/EditScript.h"

namespace onnxlens::engine {
namespace {

using testing::addNode;

void setBatchedFloat(onnx::ValueInfoProto* v, const std::string& name, const std::string& batch,
                     std::int64_t width) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    auto* d0 = t->mutable_shape()->add_dim();
    if (batch.empty())
        d0->set_dim_value(2);
    else
        d0->set_dim_param(batch);
    t->mutable_shape()->add_dim()->set_dim_value(width);
}

// y = Relu(Identity(x) * w), x [batch, 4]; with `mix`, y = x - ReduceMean(x over the batch).
onnx::ModelProto smallModel(bool mix = false, const std::string& batch = "batch") {
    auto model = testing::emptyModel(13);
    auto& g = *model.mutable_graph();
    g.set_name("small");
    setBatchedFloat(g.add_input(), "x", batch, 4);
    if (mix) {
        auto* mean = addNode(g, "ReduceMean", {"x"}, {"mean"});
        auto* axes = mean->add_attribute();
        axes->set_name("axes");
        axes->set_type(onnx::AttributeProto::INTS);
        axes->add_ints(0);
        addNode(g, "Sub", {"x", "mean"}, {"y"});
    } else {
        testing::addInitializer(g, "w", Tensor::fromVector<float>({4}, {1.f, -2.f, 3.f, 0.5f}));
        addNode(g, "Identity", {"x"}, {"x_copy"});
        addNode(g, "Mul", {"x_copy", "w"}, {"product"});
        addNode(g, "Relu", {"product"}, {"y"});
    }
    setBatchedFloat(g.add_output(), "y", batch, 4);
    return model;
}

std::vector<ModelEdit> everyKind() {
    return {setDimEdit("x", 0, "batch"),
            makeBatchDynamicEdit("n"),
            renameEdit("a", "b", RenameTarget::Node),
            addOutputEdit("t"),
            removeOutputEdit("y"),
            pruneEdit(),
            extractEdit({"a"}, {"b", "c"}),
            deleteNodeEdit("/block/Dropout"),
            setAttributeEdit("conv.1", "strides", "[2,2]"),
            setInitializerEdit("w", std::filesystem::path("/tmp/w.npy")),
            setMetadataEdit("author", "me"),
            convertOpsetEdit(15)};
}

TEST(EditScript, EveryEditThroughJsonAndBack) {
    const auto edits = everyKind();
    auto text = editScriptToJson(edits);
    ASSERT_TRUE(text) << text.error().message;
    auto parsed = parseEditScript(*text);
    ASSERT_TRUE(parsed) << parsed.error().message;
    ASSERT_EQ(parsed->size(), edits.size());
    for (std::size_t i = 0; i < edits.size(); ++i)
        EXPECT_TRUE((*parsed)[i] == edits[i]) << edits[i].describe() << "\n" << *text;
    // A bare list is read too, and relative files resolve against the script's folder.
    auto bare = parseEditScript(R"([{"op": "set-initializer", "initializer": "w", "file": "w.npy"},
                                    {"op": "make-batch-dynamic"}])",
                                "/data/scripts");
    ASSERT_TRUE(bare) << bare.error().message;
    EXPECT_EQ((*bare)[0].file, std::filesystem::path("/data/scripts/w.npy"));
    EXPECT_EQ((*bare)[1].value, "batch");
}

TEST(EditScript, ScriptErrorsNameTheEdit) {
    auto expectError = [](const std::string& text, const std::string& fragment) {
        auto parsed = parseEditScript(text);
        ASSERT_FALSE(parsed) << text;
        EXPECT_NE(parsed.error().message.find(fragment), std::string::npos)
            << parsed.error().message;
    };
    expectError("{", "not JSON");
    expectError(R"({"edit": []})", "expected {\"edits\"");
    expectError(R"({"edits": [{"op": "explode"}]})", "edit 1: unknown op \"explode\"");
    expectError(R"({"edits": [{"op": "prune"}, {"op": "rename", "from": "a"}]})",
                "edit 2: rename needs \"to\"");
    expectError(R"({"edits": [{"op": "rename", "from": "a", "to": "b", "tagret": "node"}]})",
                "rename has no key \"tagret\"");
    expectError(R"({"edits": [{"op": "set-dim", "tensor": "x", "axis": "0", "value": "1"}]})",
                "needs an integer \"axis\"");
    expectError(R"({"edits": [{"op": "opset", "version": 100000}]})", "out of range");
    expectError(R"({"edits": [{"op": "extract", "inputs": ["a"]}]})", "needs \"outputs\"");
    expectError(R"({"edits": [{"op": "rename", "from": "a", "to": "b", "target": "edge"}]})",
                "auto, tensor or node");
    // A tensor in memory has no file to export.
    auto inMemory = editScriptToJson(
        {setInitializerEdit("w", std::make_shared<onnx::TensorProto>(onnx::TensorProto()))});
    EXPECT_FALSE(inMemory);
}

TEST(EditScript, AppliesInOrderAndStopsAtTheFirstFailure) {
    auto model = smallModel();
    const auto result =
        applyEditScript(model, {renameEdit("x", "input"), setDimEdit("input", 0, "3"),
                                renameEdit("y", "input"), setMetadataEdit("never", "applied")});
    EXPECT_FALSE(result.ok());
    EXPECT_EQ(result.failedIndex, 2);
    EXPECT_NE(result.error.find("edit 3 (rename 'y' to 'input'"), std::string::npos)
        << result.error;
    EXPECT_EQ(result.reports.size(), 2u);
    // The edits before it stay applied; the failing one and those after changed nothing.
    EXPECT_EQ(model.graph().input(0).name(), "input");
    EXPECT_EQ(model.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 3);
    EXPECT_EQ(model.graph().output(0).name(), "y");
    EXPECT_EQ(model.metadata_props_size(), 0);
}

TEST(EditScript, SetAttributeIsCheckedByTheEngineKernel) {
    // Resize's mode is a free string to onnx's schema; the engine's kernel knows its values, so a
    // value it refuses refuses the edit, naming it, and the model is unchanged.
    auto model = testing::emptyModel(13);
    auto& g = *model.mutable_graph();
    setBatchedFloat(g.add_input(), "x", "", 4);
    testing::addInitializer(g, "scales", Tensor::fromVector<float>({2}, {1.f, 2.f}));
    addNode(g, "Resize", {"x", "", "scales"}, {"y"})->set_name("resize");
    setBatchedFloat(g.add_output(), "y", "", 8);
    const std::string before = model.SerializeAsString();
    auto refused = applyEditScript(model, {setAttributeEdit("resize", "mode", "bogus")});
    EXPECT_FALSE(refused.ok());
    EXPECT_NE(refused.error.find("the engine refuses it"), std::string::npos) << refused.error;
    EXPECT_NE(refused.error.find("'bogus'"), std::string::npos) << refused.error;
    EXPECT_EQ(model.SerializeAsString(), before);
    auto accepted = applyEditScript(model, {setAttributeEdit("resize", "mode", "linear")});
    EXPECT_TRUE(accepted.ok()) << accepted.error;
}

TEST(EditScript, DryRunLeavesTheModelAndCleanupRemovesIdentity) {
    auto model = smallModel();
    const std::string before = model.SerializeAsString();
    EditScriptOptions options;
    options.dryRun = true;
    auto preview =
        applyEditScript(model, {renameEdit("x", "input"), setDimEdit("input", 0, "3")}, options);
    EXPECT_TRUE(preview.ok()) << preview.error;
    EXPECT_EQ(preview.reports.size(), 2u);
    EXPECT_EQ(model.SerializeAsString(), before);

    options = {};
    options.cleanup = true;
    auto result = applyEditScript(model, {setMetadataEdit("author", "me")}, options);
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(testing::opCounts(model).count("Identity"), 0u);
    EXPECT_GE(result.cleanupRewrites, 1);
    EXPECT_EQ(testing::opCounts(model)["Mul"], 1);  // no fusion touched the rest
}

TEST(EditScript, BatchCheckComparesSampleBySample) {
    // Fixed batch 2 made dynamic: each sample alone gives its row of the batch.
    auto model = smallModel(false, "");
    ASSERT_TRUE(applyModelEdit(model, makeBatchDynamicEdit("batch")));
    auto check = verifyDynamicBatch(model, {}, "batch", 4);
    ASSERT_TRUE(check) << check.error().message;
    EXPECT_TRUE(check->ran) << check->error;
    EXPECT_EQ(check->outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(check->maxAbsDifference, 0.0);
    EXPECT_TRUE(check->passed());

    // A model that mixes the samples (minus the batch mean): alone, each row is zero.
    auto mixing = smallModel(true);
    check = verifyDynamicBatch(mixing, {}, "batch", 4);
    ASSERT_TRUE(check) << check.error().message;
    EXPECT_TRUE(check->ran) << check->error;
    EXPECT_GT(check->maxAbsDifference, 0.01);
    EXPECT_FALSE(check->passed());
    EXPECT_EQ(check->worstOutput, "y");
    EXPECT_FALSE(verifyDynamicBatch(mixing, {}, "batch", 0));
}

}  // namespace
}  // namespace onnxlens::engine
