// onnxlens-cli export compared with PyTorch module by module: a model whose third block computes
// otherwise while it is exported (tests/app/data/export_diverging_module.py) fails the numbers,
// the exporter then records every module's output and the report names blocks.2, its ONNX node,
// figures the test recomputes from the recorded tensors, and the error of the modules after it;
// a passing export with --record-modules reports every module within tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "ExportReportSupport.h"
#include "onnxlens/engine/TensorProto.h"

using namespace onnxlens::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

#define REQUIRE_TORCH() \
    if (!pythonHasModules({"torch", "onnx"})) GTEST_SKIP() << "/usr/bin/python3 has no torch/onnx"

bool hasLine(const Json& report, const std::string& key) {
    return std::any_of(report["lines"].begin(), report["lines"].end(),
                       [&](const Json& l) { return l["key"] == key; });
}

// The recorded tensor of `module` (its first output) as floats.
std::vector<float> recorded(const fs::path& out, const std::string& module) {
    const Json index = readJsonFile(out / "modules" / "index.json");
    for (const auto& entry : index["modules"])
        if (entry["module"] == module) {
            auto value = onnxlens::engine::readValueFile(
                out / "modules" / entry["outputs"][0]["file"].get<std::string>());
            EXPECT_TRUE(value) << value.error().message;
            const auto& t = value->tensor();
            return {t.data<float>(), t.data<float>() + t.numel()};
        }
    ADD_FAILURE() << "no module " << module << " in index.json";
    return {};
}

}  // namespace

TEST(CliExportModules, FirstDivergentModuleNamedWhenTheNumbersDiffer) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path out = scratch / "diverging";
    // No --record-modules: the mismatch alone makes the exporter record the modules.
    auto r = runCli({"export", "--script", exportDataScript("export_diverging_module.py"), "--out",
                     out.string(), "--threads", "1", "--runs", "1", "--warmup", "0", "--json"});
    ASSERT_EQ(r.exitCode, 1) << r.out << r.err;
    const Json doc = Json::parse(r.out);
    EXPECT_EQ(reportLine(doc, "numbers")["status"], "fail");
    const Json& line = reportLine(doc, "modules");
    EXPECT_EQ(line["status"], "fail");
    const std::string figure = line["figure"];
    EXPECT_NE(figure.find("first divergent module blocks.2 (Block) at ONNX node "
                          "/blocks/blocks.2/Add (Add)"),
              std::string::npos)
        << figure;
    ASSERT_TRUE(fs::is_regular_file(out / "modules" / "index.json"));

    const Json& modules = doc["modules"];
    const Json& first = modules["first_divergence"];
    EXPECT_EQ(first["module"], "blocks.2");
    EXPECT_EQ(first["type"], "Block");
    EXPECT_EQ(first["onnx_node"], "/blocks/blocks.2/Add");
    EXPECT_EQ(first["onnx_value"], "/blocks/blocks.2/Add_output_0");
    // The exported block adds 1.25 * act instead of act: its error is 0.25 * |act| (act as
    // PyTorch recorded it, blocks.2.act agreeing with the ONNX Tanh).
    const auto act = recorded(out, "blocks.2.act");
    ASSERT_FALSE(act.empty());
    float largest = 0;
    for (float v : act) largest = std::max(largest, std::fabs(v));
    EXPECT_NEAR(first["max_abs_error"].get<double>(), 0.25 * largest, 1e-4);

    // Every module before it in the graph agrees (blocks.2.linear and blocks.2.act included).
    std::vector<std::string> before;
    for (const auto& o : modules["outputs"]) {
        if (o["module"] == "blocks.2") break;
        if (!o.contains("onnx_node")) continue;
        before.push_back(o["module"]);
        EXPECT_TRUE(o["within_tolerance"].get<bool>()) << o.dump();
    }
    EXPECT_NE(std::find(before.begin(), before.end(), "blocks.2.act"), before.end());
    EXPECT_NE(std::find(before.begin(), before.end(), "embed"), before.end());
    // The error after it: blocks.3's modules, the Sequential and the head, in the graph's order.
    std::vector<std::string> growth;
    for (const auto& o : modules["error_growth"]) growth.push_back(o["module"]);
    ASSERT_FALSE(growth.empty());
    EXPECT_EQ(growth.back(), "head");
    EXPECT_NE(std::find(growth.begin(), growth.end(), "blocks.3"), growth.end());
    EXPECT_EQ(std::find(growth.begin(), growth.end(), "blocks.1"), growth.end());
    EXPECT_FALSE(modules["error_growth"].back()["within_tolerance"].get<bool>());

    std::ifstream md(out / "report.md");
    const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("## Modules against PyTorch"), std::string::npos) << text;
    EXPECT_NE(text.find("First module that diverges: `blocks.2` (Block), ONNX node "
                        "`/blocks/blocks.2/Add`"),
              std::string::npos)
        << text;
    EXPECT_EQ(readJsonFile(out / "report.json")["modules"]["first_divergence"]["module"],
              "blocks.2");
}

TEST(CliExportModules, RecordModulesOnAPassingExport) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path out = scratch / "tiny_cnn";
    auto r =
        runCli({"export", "--script", exportDataScript("export_tiny_cnn.py"), "--out", out.string(),
                "--record-modules", "--threads", "1", "--runs", "1", "--warmup", "0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const Json doc = Json::parse(r.out);
    EXPECT_EQ(reportLine(doc, "modules")["status"], "pass") << reportLine(doc, "modules").dump();
    EXPECT_TRUE(doc["modules"]["first_divergence"].is_null());
    // Conv, BatchNorm (folded into the Conv: its output is the Conv's ONNX value), ReLU, ...
    EXPECT_GE(doc["modules"]["compared"].get<int>(), 7);
    for (const auto& o : doc["modules"]["outputs"])
        if (o["module"] == "features.1") {
            EXPECT_EQ(o["onnx_node"], "/features/features.0/Conv");
        }

    // Exported again without the option: the old records go, and a passing export has no line.
    r = runCli({"export", "--script", exportDataScript("export_tiny_cnn.py"), "--out", out.string(),
                "--threads", "1", "--runs", "1", "--warmup", "0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_FALSE(fs::exists(out / "modules"));
    EXPECT_FALSE(hasLine(Json::parse(r.out), "modules"));
}
