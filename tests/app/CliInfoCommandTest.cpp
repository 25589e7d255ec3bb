#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"

using namespace onnxlens::testing;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

int lineCount(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST(CliInfo, JsonHasEveryKeyOfTheContract) {
    CliScratchDir dir;
    auto path = writeModel(dir, "relu.onnx", reluModel());
    auto r = runCli({"info", path.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = json::parse(r.out);
    for (const char* key : {"ir_version", "producer_name", "producer_version", "opset_import",
                            "inputs", "outputs", "dynamic_axes", "node_count", "op_histogram",
                            "initializers", "metadata_props", "functions", "subgraphs", "checker",
                            "shape_inference", "domain", "model_version", "doc_string"})
        EXPECT_TRUE(doc.contains(key)) << key;
    EXPECT_EQ(doc["ir_version"], 8);
    EXPECT_EQ(doc["producer_name"], "cli-tests");
    EXPECT_EQ(doc["producer_version"], "0.1");
    EXPECT_EQ(doc["opset_import"], json::parse(R"([{"domain": "", "version": 15}])"));
    EXPECT_EQ(doc["inputs"], json::parse(R"([
        {"name": "X", "dtype": "float32", "shape": ["batch", null, 3]},
        {"name": "scale", "dtype": "bfloat16", "shape": [1]}])"));
    EXPECT_EQ(doc["outputs"], json::parse(R"([{"name": "Y", "dtype": "float32", "shape": null}])"));
    EXPECT_EQ(doc["dynamic_axes"], json::parse(R"([
        {"tensor": "X", "axis": 0, "symbol": "batch"},
        {"tensor": "X", "axis": 1, "symbol": null}])"));
    EXPECT_EQ(doc["node_count"], 1);
    EXPECT_EQ(doc["op_histogram"], json::parse(R"({"ai.onnx::Relu": 1})"));
    EXPECT_EQ(doc["initializers"]["count"], 0);
    EXPECT_EQ(doc["subgraphs"], 0);
    // The onnx checker wants a shape on main-graph outputs; Y has none.
    EXPECT_EQ(doc["checker"]["ok"], false);
    EXPECT_TRUE(doc["checker"]["message"].get<std::string>().find("'shape'") != std::string::npos);
    EXPECT_EQ(doc["shape_inference"]["ok"], true);
    // Y is [batch, ?, 3]: its rank is known, its shape is not (X's second dim has no name).
    EXPECT_EQ(doc["shape_inference"]["known_edges"], 0);
    EXPECT_EQ(doc["shape_inference"]["ranked_edges"], 1);
    EXPECT_EQ(doc["shape_inference"]["total_edges"], 1);
}

TEST(CliInfo, TinyBertSample) {
    auto path = sampleModel("tiny_bert");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no sample " << path;
    auto r = runCli({"info", "--json", path.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(
        doc["inputs"][0],
        json::parse(R"({"name": "input_ids", "dtype": "int64", "shape": ["batch", "sequence"]})"));
    EXPECT_EQ(doc["inputs"][1]["name"], "attention_mask");
    EXPECT_EQ(doc["outputs"][0]["shape"][2], 64);
    EXPECT_GT(doc["op_histogram"]["ai.onnx::MatMul"].get<int>(), 0);
    EXPECT_GT(doc["initializers"]["parameters"].get<long>(), 100000);
    EXPECT_EQ(doc["initializers"]["bytes"].get<long>(),
              4 * doc["initializers"]["parameters"].get<long>());
    EXPECT_EQ(doc["checker"]["ok"], true);
    // Every edge of the torch export has its full shape, `batch` and `sequence` kept.
    EXPECT_EQ(doc["shape_inference"]["known_edges"].get<int>(),
              doc["shape_inference"]["total_edges"].get<int>());
    EXPECT_GT(doc["shape_inference"]["shaped_by_symbolic_propagation"].get<int>(), 0);
}

TEST(CliInfo, TextReportHasAlignedSections) {
    CliScratchDir dir;
    auto path = writeModel(dir, "relu.onnx", reluModel());
    auto r = runCli({"info", path.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* part :
         {"IR version        8", "Opsets            ai.onnx 15", "Inputs (2)",
          "X      float32   [batch, ?, 3]", "scale  bfloat16  [1]", "Outputs (1)",
          "Y     float32  ?\n", "Dynamic axes (2)", "X axis 0: batch", "ai.onnx::Relu",
          "Checker           FAILED: Field 'shape' of 'type' is required",
          // Y is [batch, ?, 3]: its rank is known, not its whole shape.
          "Shape inference   ok, 0/1 edges with a known shape, 1 with a known rank"})
        EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
}

TEST(CliInfo, SubgraphModelCountsBodies) {
    const std::string path = std::string(ONNXLENS_TESTDATA_DIR) + "/node/test_if/model.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP();
    auto r = runCli({"info", "--json", path});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_EQ(doc["subgraphs"], 2);
    EXPECT_EQ(doc["node_count"], 1);
    EXPECT_GT(doc["node_count_with_subgraphs"].get<int>(), 1);
}

TEST(CliInfo, MissingFileIsAUsageErrorNamingIt) {
    CliScratchDir dir;
    auto path = dir / "absent.onnx";
    auto r = runCli({"info", path.string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(lineCount(r.err), 1) << r.err;
    EXPECT_TRUE(contains(r.err, path.string())) << r.err;
    EXPECT_TRUE(contains(r.err, "no such file")) << r.err;
}

TEST(CliInfo, RandomBytesAreAUsageError) {
    CliScratchDir dir;
    auto path = dir / "noise.onnx";
    writeBytes(path, std::string("\xde\xad\xbe\xef\x01\x02\x03 this is not a model"));
    auto r = runCli({"info", "--json", path.string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(lineCount(r.err), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "noise.onnx")) << r.err;
}

TEST(CliInfo, UndefinedTensorIsAUsageError) {
    CliScratchDir dir;
    auto model = reluModel();
    model.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
    auto path = writeModel(dir, "bad.onnx", model);
    auto r = runCli({"info", path.string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(contains(r.err, "bad.onnx")) << r.err;
    EXPECT_TRUE(contains(r.err, "'nowhere'")) << r.err;
}

TEST(CliInfo, UsageErrors) {
    EXPECT_EQ(runCli({"info"}).exitCode, 2);
    EXPECT_EQ(runCli({"info", "a.onnx", "b.onnx"}).exitCode, 2);
    auto r = runCli({"info", "a.onnx", "--bogus"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(contains(r.err, "--bogus")) << r.err;
}
