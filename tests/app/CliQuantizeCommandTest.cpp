// onnxlens-cli quantize driven as a user would: the samples, --json, and the bad inputs (nothing to
// quantize, output = input, a read-only folder, a model the engine cannot run), each a clear
// error with nothing written.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"

namespace onnxlens::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> filesIn(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(CliQuantize, TinyBertWithJson) {
    CliScratchDir dir;
    const auto out = dir / "bert.int8.onnx";
    auto r = runCli({"quantize", sampleModel("tiny_bert").string(), out.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_GT(doc["quantized_per_op_type"]["MatMul"].get<int>(), 0);
    EXPECT_EQ(doc["quantized_count"].get<int>(), static_cast<int>(doc["quantized"].size()));
    EXPECT_EQ(doc["bytes_after"].get<std::uint64_t>(), fs::file_size(out));
    EXPECT_EQ(doc["bytes_before"].get<std::uint64_t>(), fs::file_size(sampleModel("tiny_bert")));
    // The embeddings (Gather) are int8 too by default, as quantize_dynamic writes them.
    EXPECT_GT(doc["size_ratio"].get<double>(), 3.0);
    EXPECT_GT(doc["quantized_per_op_type"]["Gather"].get<int>(), 0);
    for (const auto& s : doc["skipped"]) EXPECT_NE(s["op_type"], "Gather") << s.dump();
    EXPECT_EQ(doc["format"], "qoperator");
    EXPECT_TRUE(doc["external_data"].is_null());
    // The int8 model runs on the engine.
    auto run = runCli({"run", out.string(), "--dim", "sequence=8"});
    EXPECT_EQ(run.exitCode, 0) << run.err;
}

TEST(CliQuantize, TinyBertInt4AsymmetricRunsAndChecks) {
    CliScratchDir dir;
    const auto out = dir / "bert.int4.onnx";
    auto r =
        runCli({"quantize", sampleModel("tiny_bert").string(), out.string(), "--format", "int4",
                "--block-size", "16", "--asymmetric", "--op-types", "MatMul,Gemm", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["format"], "int4");
    EXPECT_EQ(doc["block_size"], 16);
    EXPECT_EQ(doc["symmetric"], false);
    EXPECT_GT(doc["quantized_per_op_type"]["MatMul"].get<int>(), 0);
    EXPECT_EQ(doc["quantized_per_op_type"].count("Gemm"), 0u);
    auto check = runCli({"check", out.string()});
    EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
    auto run = runCli({"run", out.string(), "--dim", "sequence=8"});
    EXPECT_EQ(run.exitCode, 0) << run.err;
}

TEST(CliQuantize, SampleCnnWithConvPerChannelAndAReport) {
    CliScratchDir dir;
    const auto out = dir / "cnn.int8.onnx";
    auto r = runCli({"quantize", sampleModel("mnist_cnn").string(), out.string(), "--op-types",
                     "Conv,Gemm", "--per-channel", "--report", (dir / "report").string(), "--runs",
                     "2", "--warmup", "0", "--threads", "1"});
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(dir / "report" / "report.md"));
    const auto report = nlohmann::json::parse(std::ifstream(dir / "report" / "report.json"));
    EXPECT_EQ(report["size"]["int8_bytes"].get<std::uint64_t>(), fs::file_size(out));
    EXPECT_EQ(report["latency"]["threads"].get<int>(), 1);
    EXPECT_EQ(report["settings"]["per_channel"], true);
    EXPECT_TRUE(report["passed"].get<bool>());
}

TEST(CliQuantize, NothingToQuantizeWritesNothing) {
    CliScratchDir dir;
    const auto model = writeModel(dir, "relu.onnx", reluModel());
    auto r = runCli({"quantize", model.string(), (dir / "out.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("relu.onnx: nothing to quantize"), std::string::npos) << r.err;
    EXPECT_EQ(filesIn(dir / ""), (std::vector<std::string>{"relu.onnx"}));
}

TEST(CliQuantize, OutputThatIsTheInputIsRefused) {
    CliScratchDir dir;
    fs::copy_file(sampleModel("tiny_bert"), dir / "model.onnx");
    const auto before = fs::file_size(dir / "model.onnx");
    auto r = runCli({"quantize", (dir / "model.onnx").string(), (dir / "model.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("is the input model"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(dir / "model.onnx"), before);
    EXPECT_EQ(filesIn(dir / ""), (std::vector<std::string>{"model.onnx"}));
}

TEST(CliQuantize, ReadOnlyFolderIsAClearError) {
    CliScratchDir dir;
    fs::create_directories(dir / "ro");
    ::chmod((dir / "ro").c_str(), 0555);
    fs::path folder = dir / "ro";
    if (::access(folder.c_str(), W_OK) == 0) {
        // root writes anywhere chmod allows; sysfs refuses new files even to root.
        folder = "/sys";
        if (::access(folder.c_str(), W_OK) == 0 && std::ofstream(folder / "onnxlens-probe"))
            GTEST_SKIP() << "no folder this user cannot write to";
    }
    auto r =
        runCli({"quantize", sampleModel("tiny_bert").string(), (folder / "out.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("out.onnx"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(folder / "out.onnx"));
    ::chmod((dir / "ro").c_str(), 0755);
    EXPECT_TRUE(fs::is_empty(dir / "ro"));
}

TEST(CliQuantize, ModelTheEngineCannotRunWritesNothing) {
    CliScratchDir dir;
    // An operator of a domain no kernel serves.
    onnx::ModelProto model = reluModel();
    auto* graph = model.mutable_graph();
    graph->mutable_node(0)->set_op_type("Frobnicate");
    graph->mutable_node(0)->set_domain("com.example");
    auto* custom = model.add_opset_import();
    custom->set_domain("com.example");
    custom->set_version(1);
    const auto path = writeModel(dir, "custom.onnx", model);
    auto r = runCli({"quantize", path.string(), (dir / "out.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("the engine cannot run relu_node (Frobnicate)"), std::string::npos)
        << r.err;
    EXPECT_EQ(filesIn(dir / ""), (std::vector<std::string>{"custom.onnx"}));
}

TEST(CliQuantize, UsageErrors) {
    CliScratchDir dir;
    const auto model = sampleModel("tiny_bert").string();
    auto r = runCli({"quantize", model, (dir / "o.onnx").string(), "--op-types", "Relu"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("cannot quantize 'Relu'"), std::string::npos) << r.err;
    r = runCli({"quantize", model, (dir / "o.onnx").string(), "--format", "int3"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
    r = runCli(
        {"quantize", model, (dir / "o.onnx").string(), "--format", "int4", "--block-size", "48"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--block-size"), std::string::npos) << r.err;
    r = runCli({"quantize", model, (dir / "o.onnx").string(), "--format", "int4",
                "--accuracy-level", "5"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--accuracy-level"), std::string::npos) << r.err;
    r = runCli({"quantize", model, (dir / "o.onnx").string(), "--asymmetric"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("int4 only"), std::string::npos) << r.err;
    r = runCli({"quantize", model, (dir / "missing" / "o.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
    r = runCli({"quantize", model});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("usage"), std::string::npos) << r.err;
    EXPECT_EQ(filesIn(dir / ""), std::vector<std::string>{});
}

}  // namespace
}  // namespace onnxlens::testing
