// onnxlens-cli export end to end: the real exporter (Debian's torch) on a scripted model, a text
// model with a task preset and a torchvision model, every report line checked against values the
// test computes itself; and each failure (no torch, unsupported operator, a raising script, a
// time-out, a crashing interpreter) ending with its message, a hint and exit 2, without a hang.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "ExportReportSupport.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/workflows/InputPreparation.h"

using onnxlens::testing::runCli;
using namespace onnxlens::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

#define REQUIRE_TORCH()                                      \
    if (!pythonHasModules({"torch", "torchvision", "onnx"})) \
    GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision/onnx"

// The largest |engine - PyTorch| over every output of one data set, computed here with a fresh
// session and a plain loop (not the report's code path).
// With the report's thread count: oneDNN may split a reduction differently with more threads,
// which moves the last bits of the outputs.
double recomputeMaxAbsError(const fs::path& folder, const std::string& set, std::int64_t* batch,
                            int threads = 0) {
    auto model = onnxlens::loadModel(folder / "model.onnx");
    EXPECT_TRUE(model) << model.error().message;
    onnxlens::engine::SessionOptions options;
    options.threads = threads;
    auto session = onnxlens::engine::Session::create(*model, options);
    EXPECT_TRUE(session) << session.error().message;
    std::map<std::string, onnxlens::engine::Value> feeds;
    const auto& inputs = (*session)->inputs();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        auto v =
            onnxlens::engine::readValueFile(folder / set / ("input_" + std::to_string(k) + ".pb"));
        EXPECT_TRUE(v) << v.error().message;
        feeds[inputs[k].name] = *v;
    }
    *batch = feeds[inputs[0].name].tensor().dim(0);
    auto outputs = (*session)->run(feeds);
    EXPECT_TRUE(outputs) << outputs.error().message;
    double worst = 0;
    for (std::size_t k = 0; k < outputs->size(); ++k) {
        auto expected =
            onnxlens::engine::readValueFile(folder / set / ("output_" + std::to_string(k) + ".pb"));
        EXPECT_TRUE(expected);
        const auto& e = expected->tensor();
        const auto& a = (*outputs)[k].tensor();
        EXPECT_EQ(a.shape(), e.shape());
        for (std::int64_t i = 0; i < e.numel(); ++i)
            worst = std::max(worst, std::fabs(a.valueAsDouble(i) - e.valueAsDouble(i)));
    }
    return worst;
}

// Checks every line of a passing report against the files and figures it was made from.
void checkPassingReport(const fs::path& out, const Json& doc, int runs) {
    ASSERT_TRUE(doc["passed"].get<bool>()) << doc.dump(2);
    const Json exported = readJsonFile(out / "export.json");
    const Json onDisk = readJsonFile(out / "report.json");
    EXPECT_EQ(onDisk["lines"], doc["lines"]);

    // Exported: opset and size as written.
    EXPECT_EQ(reportLine(doc, "exported")["status"], "pass");
    EXPECT_EQ(doc["opset"], exported["opset"]);
    EXPECT_EQ(doc["model_bytes"].get<std::uint64_t>(), fs::file_size(out / "model.onnx"));
    EXPECT_NE(reportLine(doc, "exported")["figure"].get<std::string>().find(
                  "opset " + exported["opset"].dump()),
              std::string::npos);

    // Checker: the onnx checker (through the model library) agrees.
    auto model = onnxlens::loadModel(out / "model.onnx");
    ASSERT_TRUE(model) << model.error().message;
    EXPECT_TRUE(onnxlens::runChecker(*model->proto).ok);
    EXPECT_EQ(reportLine(doc, "checker")["status"], "pass");

    // Numbers and dynamic batch: recomputed from the .pb files.
    std::int64_t batch0 = 0, batch1 = 0;
    const int threads = doc.value("engine_threads", 0);
    const double error0 = recomputeMaxAbsError(out, "test_data_set_0", &batch0, threads);
    const double error1 = recomputeMaxAbsError(out, "test_data_set_1", &batch1, threads);
    ASSERT_EQ(doc["data_sets"].size(), 2u);
    EXPECT_NEAR(doc["data_sets"][0]["max_abs_error"].get<double>(), error0, 1e-9);
    EXPECT_NEAR(doc["data_sets"][1]["max_abs_error"].get<double>(), error1, 1e-9);
    EXPECT_LE(error0, 1e-4);
    EXPECT_LE(error1, 1e-4);
    EXPECT_EQ(batch1, 2 * batch0);
    EXPECT_EQ(doc["data_sets"][1]["batch"].get<std::int64_t>(), batch1);
    EXPECT_EQ(reportLine(doc, "numbers")["status"], "pass");
    EXPECT_EQ(reportLine(doc, "dynamic_batch")["status"], "pass");

    // Latency: the ratio is the engine's median over PyTorch's, both timed with `runs` runs,
    // interleaved (the exporter serving timing rounds). A busy test machine is flagged "warn".
    const std::string latencyStatus = reportLine(doc, "latency")["status"];
    EXPECT_TRUE(latencyStatus == "pass" || latencyStatus == "warn") << doc.dump(2);
    EXPECT_EQ(latencyStatus == "warn", doc["latency_busy"].get<bool>());
    EXPECT_TRUE(doc["latency_interleaved"].get<bool>()) << doc["pytorch_timing"];
    EXPECT_EQ(doc["engine_latency"]["runs"].get<int>(), runs);
    EXPECT_EQ(doc["pytorch_latency"]["runs"].get<int>(), runs);
    EXPECT_EQ(exported["pytorch_latency"]["runs"].get<int>(), runs);
    const double torchMedian = doc["pytorch_latency"]["median_ms"].get<double>();
    EXPECT_GT(torchMedian, 0);
    EXPECT_NEAR(doc["latency_ratio"].get<double>(),
                doc["engine_latency"]["median_ms"].get<double>() / torchMedian, 1e-12);

    std::ifstream md(out / "report.md");
    const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
    for (const char* title :
         {"Exported", "ONNX checker passed", "Numbers match PyTorch", "Dynamic batch works"})
        EXPECT_NE(text.find(std::string("| PASS | ") + title + " |"), std::string::npos)
            << title << "\n"
            << text;
}

// A --python that is not a usable torch Python: a shell script in the scratch folder.
std::string writeWrapper(const onnxlens::testing::CliScratchDir& scratch, const std::string& name,
                         const std::string& body) {
    const fs::path path = scratch / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path.string();
}

// Whether a live (not zombie) process has `text` (a scratch path) in its command line.
bool processRunningWith(const std::string& text) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream cmdline(entry.path() / "cmdline", std::ios::binary);
        std::string args((std::istreambuf_iterator<char>(cmdline)),
                         std::istreambuf_iterator<char>());
        std::replace(args.begin(), args.end(), '\0', ' ');
        if (args.find(text) != std::string::npos) return true;
    }
    return false;
}

struct FailedExport {
    onnxlens::testing::CliResult result;
    double seconds = 0;
};

FailedExport exportExpectingFailure(const std::vector<std::string>& extra,
                                    const onnxlens::testing::CliScratchDir& scratch) {
    std::vector<std::string> args = {"export",   "--out", (scratch / "out").string(), "--runs", "1",
                                     "--warmup", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto start = std::chrono::steady_clock::now();
    FailedExport f;
    f.result = runCli(args);
    f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(f.result.exitCode, 2) << f.result.out << f.result.err;
    EXPECT_NE(f.result.err.find("hint: "), std::string::npos) << f.result.err;
    EXPECT_FALSE(fs::exists(scratch / "out" / "export.json"));
    return f;
}

}  // namespace

TEST(CliExport, ScriptedModelEndToEnd) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path out = scratch / "tiny_cnn";
    auto r =
        runCli({"export", "--script", exportDataScript("export_tiny_cnn.py"), "--out", out.string(),
                "--bench", "--runs", "3", "--warmup", "1", "--threads", "1", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const Json doc = Json::parse(r.out);
    checkPassingReport(out, doc, 3);
    const Json exported = readJsonFile(out / "export.json");
    EXPECT_EQ(exported["input_names"], Json::array({"image"}));
    EXPECT_EQ(exported["output_names"], Json::array({"probabilities"}));
    EXPECT_EQ(exported["opset"].get<int>(), 17);  // Debian's torch 1.13 supports up to 17
    EXPECT_NE(r.err.find("  | exported in"), std::string::npos)
        << r.err;  // the log, streamed on stderr

    // The same export with a latency limit nobody meets: a failed gate, exit 1.
    r = runCli({"export", "--script", exportDataScript("export_tiny_cnn.py"), "--out", out.string(),
                "--bench", "--runs", "2", "--warmup", "0", "--max-ratio", "1e-9"});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL Latency against PyTorch"), std::string::npos) << r.out;
    EXPECT_EQ(reportLine(readJsonFile(out / "report.json"), "latency")["status"], "fail");
}

TEST(CliExport, TextTaskPresetNamesInputsOutputsAndAxes) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path out = scratch / "qa";
    auto r = runCli({"export", "--script", exportDataScript("export_tiny_text.py"), "--task",
                     "question-answering", "--out", out.string(), "--json", "--runs", "2",
                     "--warmup", "0"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const Json doc = Json::parse(r.out);
    EXPECT_TRUE(doc["passed"].get<bool>()) << doc.dump(2);
    EXPECT_EQ(reportLine(doc, "latency")["status"], "skip");  // no --bench
    auto model = onnxlens::loadModel(out / "model.onnx");
    ASSERT_TRUE(model) << model.error().message;
    const auto summary = onnxlens::summarizeModel(*model);
    ASSERT_TRUE(summary);
    ASSERT_EQ(summary->inputs.size(), 3u);
    EXPECT_EQ(summary->inputs[0].name, "input_ids");
    EXPECT_EQ(summary->inputs[1].name, "attention_mask");
    EXPECT_EQ(summary->inputs[2].name, "token_type_ids");
    ASSERT_EQ(summary->outputs.size(), 2u);
    EXPECT_EQ(summary->outputs[0].name, "start_logits");
    EXPECT_EQ(summary->outputs[1].name, "end_logits");
    const auto& ids = model->proto->graph().input(0).type().tensor_type().shape();
    EXPECT_EQ(ids.dim(0).dim_param(), "batch");
    EXPECT_EQ(ids.dim(1).dim_param(), "sequence");
    std::int64_t batch0 = 0, batch1 = 0;
    EXPECT_LE(recomputeMaxAbsError(out, "test_data_set_1", &batch1), 1e-4);
    recomputeMaxAbsError(out, "test_data_set_0", &batch0);
    EXPECT_EQ(batch1, 2 * batch0);
}

TEST(CliExport, TorchvisionModelEndToEnd) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path out = scratch / "resnet18";
    auto r = runCli({"export", "--torchvision", "resnet18", "--out", out.string(), "--bench",
                     "--runs", "3", "--warmup", "1", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    checkPassingReport(out, Json::parse(r.out), 3);
    const Json exported = readJsonFile(out / "export.json");
    EXPECT_EQ(exported["source"]["kind"], "torchvision");
    EXPECT_EQ(exported["input_shapes"], Json::parse("[[1,3,224,224]]"));
}

TEST(CliExport, TorchScriptWithInputShape) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const fs::path pt = scratch / "traced.pt";
    const std::string make =
        "/usr/bin/python3 -c 'import sys, torch; torch.manual_seed(0); "
        "m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), "
        "torch.nn.Linear(4 * 6 * 6, 3)).eval(); "
        "torch.jit.trace(m, torch.randn(1, 3, 8, 8)).save(sys.argv[1])' " +
        onnxlens::testing::shellQuote(pt.string());
    ASSERT_EQ(std::system(make.c_str()), 0);
    const fs::path out = scratch / "ts";
    auto r = runCli({"export", "--torchscript", pt.string(), "--input-shape", "1x3x8x8", "--out",
                     out.string(), "--bench", "--runs", "2", "--warmup", "1", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    checkPassingReport(out, Json::parse(r.out), 2);
    EXPECT_EQ(readJsonFile(out / "export.json")["source"]["kind"], "torchscript");
}

TEST(CliExportFailure, PythonWithoutTorch) {
    onnxlens::testing::CliScratchDir scratch;
    // -S: no site-packages, so `import torch` fails the way it does on a Python without torch.
    const auto python =
        writeWrapper(scratch, "python-without-torch", "exec /usr/bin/python3 -S \"$@\"");
    auto f = exportExpectingFailure({"--torchvision", "resnet18", "--python", python}, scratch);
    EXPECT_NE(f.result.err.find("cannot import torch"), std::string::npos) << f.result.err;
    EXPECT_NE(f.result.err.find("install PyTorch"), std::string::npos) << f.result.err;
}

TEST(CliExportFailure, OperatorTorchCannotExport) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    auto f =
        exportExpectingFailure({"--script", exportDataScript("export_unsupported_op.py")}, scratch);
    EXPECT_NE(f.result.err.find("aten::special_erfcx"), std::string::npos) << f.result.err;
    EXPECT_NE(f.result.err.find("custom symbolic"), std::string::npos) << f.result.err;
}

TEST(CliExportFailure, ScriptThatRaises) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    auto f = exportExpectingFailure({"--script", exportDataScript("export_raises.py")}, scratch);
    EXPECT_NE(
        f.result.err.find(
            "model() raised ValueError: the checkpoint path is not set (export_raises.py, line"),
        std::string::npos)
        << f.result.err;
    EXPECT_NE(f.result.out.find("Traceback"), std::string::npos);  // the log keeps the traceback
}

TEST(CliExportFailure, TimeOutStopsTheExporter) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    auto f = exportExpectingFailure(
        {"--script", exportDataScript("export_sleeps.py"), "--timeout", "4"}, scratch);
    EXPECT_NE(f.result.err.find("did not finish within 4 s"), std::string::npos) << f.result.err;
    // Killed at the limit (plus the grace period), not after the script's 600 s; and gone.
    EXPECT_LT(f.seconds, 15);
    EXPECT_FALSE(processRunningWith((scratch / "out").string()));
}

TEST(CliExportFailure, InterruptStopsTheExporterAndTheCli) {
    REQUIRE_TORCH();
    onnxlens::testing::CliScratchDir scratch;
    const std::string out = (scratch / "out").string();
    const pid_t cli = ::fork();
    ASSERT_GE(cli, 0);
    if (cli == 0) {
        const int devNull = ::open("/dev/null", O_WRONLY);
        ::dup2(devNull, STDOUT_FILENO);
        ::dup2(devNull, STDERR_FILENO);
        ::execl(ONNXLENS_CLI, ONNXLENS_CLI, "export", "--script",
                exportDataScript("export_sleeps.py").c_str(), "--out", out.c_str(), nullptr);
        ::_exit(127);
    }
    // Wait until the exporter (not just the CLI) runs, then Ctrl+C the CLI.
    const std::string exporter = "onnxlens_export.py --script " +
                                 exportDataScript("export_sleeps.py") + " --out " + out + " ";
    for (int i = 0; i < 100 && !processRunningWith(exporter); ++i) ::usleep(50 * 1000);
    ::usleep(300 * 1000);
    ::kill(cli, SIGINT);
    int status = 0;
    const auto start = std::chrono::steady_clock::now();
    pid_t done = 0;
    while ((done = ::waitpid(cli, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(15))
        ::usleep(20 * 1000);
    if (done == 0) {
        ::kill(cli, SIGKILL);
        ::waitpid(cli, &status, 0);
        FAIL() << "the CLI did not stop on SIGINT";
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    EXPECT_FALSE(processRunningWith(out));
}

TEST(CliExportFailure, CrashingExporter) {
    onnxlens::testing::CliScratchDir scratch;
    const auto python =
        writeWrapper(scratch, "python-that-crashes", "echo starting; kill -SEGV $$");
    auto f = exportExpectingFailure({"--torchvision", "resnet18", "--python", python}, scratch);
    EXPECT_NE(f.result.err.find("the exporter crashed (signal 11"), std::string::npos)
        << f.result.err;
    EXPECT_NE(f.result.out.find("  | starting"), std::string::npos) << f.result.out;
}

TEST(CliExportFailure, UsageErrors) {
    onnxlens::testing::CliScratchDir scratch;
    auto r = runCli({"export", "--out", (scratch / "o").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("exactly one of --torchvision"), std::string::npos) << r.err;
    r = runCli({"export", "--torchscript", exportDataScript("export_raises.py"), "--out",
                (scratch / "o").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--input-shape"), std::string::npos) << r.err;
    r = runCli({"export", "--torchvision", "resnet18", "--out", (scratch / "o").string(),
                "--python", (scratch / "no-such-python").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("not an executable file"), std::string::npos) << r.err;
    r = runCli({"export", "--script", (scratch / "missing.py").string(), "--out",
                (scratch / "o").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("missing.py: no such file"), std::string::npos) << r.err;
}
