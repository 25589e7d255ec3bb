#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"

using namespace onnxlens::testing;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// reluModel with a (rank-unknown) shape on its output, as the onnx checker requires.
onnx::ModelProto checkableReluModel() {
    auto model = reluModel();
    model.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape();
    return model;
}

}  // namespace

TEST(CliCheck, ValidModelPasses) {
    CliScratchDir dir;
    auto model = checkableReluModel();
    auto path = writeModel(dir, "relu.onnx", model);
    auto r = runCli({"check", path.string()});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "onnx checker: ok")) << r.out;
    EXPECT_TRUE(contains(r.out, "structure: ok")) << r.out;
    auto j = runCli({"check", "--json", path.string()});
    ASSERT_EQ(j.exitCode, 0) << j.err;
    auto doc = json::parse(j.out);
    EXPECT_EQ(doc["ok"], true);
    EXPECT_EQ(doc["checker"]["ok"], true);
    EXPECT_TRUE(doc["unsupported_nodes"].is_array());
}

TEST(CliCheck, SampleModelsPass) {
    for (const char* name : {"mnist_cnn", "tiny_bert", "lstm_classifier", "legacy_opset10"}) {
        auto path = sampleModel(name);
        if (!std::filesystem::exists(path)) continue;
        auto r = runCli({"check", path.string()});
        EXPECT_EQ(r.exitCode, 0) << name << "\n" << r.out << r.err;
    }
}

TEST(CliCheck, CheckerFailureExitsOneWithTheReason) {
    CliScratchDir dir;
    auto model = checkableReluModel();
    model.mutable_graph()->mutable_node(0)->set_op_type("Relu9000");
    auto path = writeModel(dir, "unknown_op.onnx", model);
    auto r = runCli({"check", path.string()});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "onnx checker: FAILED")) << r.out;
    EXPECT_TRUE(contains(r.out, "Relu9000")) << r.out;
    auto j = runCli({"check", "--json", path.string()});
    EXPECT_EQ(j.exitCode, 1);
    auto doc = json::parse(j.out);
    EXPECT_EQ(doc["ok"], false);
    EXPECT_EQ(doc["checker"]["ok"], false);
    EXPECT_TRUE(contains(doc["checker"]["message"].get<std::string>(), "Relu9000"));
}

TEST(CliCheck, StructuralProblemIsACheckFailure) {
    CliScratchDir dir;
    auto model = reluModel();
    model.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    auto path = writeModel(dir, "undefined.onnx", model);
    auto r = runCli({"check", "--json", path.string()});
    EXPECT_EQ(r.exitCode, 1) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["structure"]["ok"], false);
    EXPECT_TRUE(contains(doc["structure"]["message"].get<std::string>(), "'nowhere'"));
}

TEST(CliCheck, UnreadableFileIsAUsageError) {
    CliScratchDir dir;
    auto r = runCli({"check", (dir / "absent.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(contains(r.err, "absent.onnx: no such file")) << r.err;
    writeBytes(dir / "empty.onnx", "");
    auto e = runCli({"check", (dir / "empty.onnx").string()});
    EXPECT_EQ(e.exitCode, 2);
    EXPECT_TRUE(contains(e.err, "empty.onnx: the file is empty")) << e.err;
}

namespace {

std::string dynamicAxesModel(const char* name) {
    return std::string(ONNXLENS_SOURCE_DIR) + "/tests/engine/data/dynamic_axes/" + name;
}

}  // namespace

TEST(CliCheck, DynamicAxesExitCodesFollowTheVerdict) {
    // Passes: the 2-row type embedding gets token types 0..1.
    auto pass = runCli({"check", dynamicAxesModel("bert_type_embedding.onnx"), "--dynamic-axes"});
    EXPECT_EQ(pass.exitCode, 0) << pass.out << pass.err;
    EXPECT_TRUE(contains(pass.out, "dynamic axes: pass")) << pass.out;

    // Passes after rejected widths, which are listed.
    auto json =
        runCli({"check", dynamicAxesModel("text_recognizer.onnx"), "--dynamic-axes", "--json"});
    ASSERT_EQ(json.exitCode, 0) << json.out << json.err;
    auto doc = json::parse(json.out);
    EXPECT_EQ(doc["verdict"], "pass");
    ASSERT_FALSE(doc["rejections"].empty());
    EXPECT_TRUE(contains(doc["rejections"][0].get<std::string>(), "width 4 rejected"))
        << doc["rejections"][0];
    // --dim sets the example width.
    json = runCli({"check", dynamicAxesModel("text_recognizer.onnx"), "--dynamic-axes", "--json",
                   "--dim", "width=40"});
    ASSERT_EQ(json.exitCode, 0) << json.out << json.err;
    doc = json::parse(json.out);
    EXPECT_EQ(doc["runs"][0]["bindings"]["width"], 40);

    // Fails: the batch is baked into a Reshape.
    auto fail = runCli({"check", dynamicAxesModel("fixed_batch.onnx"), "--dynamic-axes"});
    EXPECT_EQ(fail.exitCode, 1) << fail.out << fail.err;
    EXPECT_TRUE(contains(fail.out, "dynamic axes: fail")) << fail.out;

    // A forced token-type range outside the table: the runs fail and nothing can be told.
    auto broken = runCli({"check", dynamicAxesModel("bert_type_embedding.onnx"), "--dynamic-axes",
                          "--int-range", "token_type_ids=5,9", "--json"});
    EXPECT_EQ(broken.exitCode, 2) << broken.out << broken.err;
    EXPECT_EQ(json::parse(broken.out)["verdict"], "cannot_tell");
}
