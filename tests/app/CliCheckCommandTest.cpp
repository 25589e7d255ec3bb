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
