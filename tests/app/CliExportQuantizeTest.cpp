// onnxlens-cli export --quantize: model.int8.onnx beside the float model, its own validation
// against PyTorch (SQNR recomputed here with a fresh session and a plain loop), its size and its
// latency against the float model in report.json.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "ExportReportSupport.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"

namespace onnxlens::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST(CliExportQuantize, Int8ModelValidatedAgainstPyTorch) {
    if (!pythonHasModules({"torch", "onnx"})) GTEST_SKIP() << "/usr/bin/python3 has no torch/onnx";
    CliScratchDir scratch;
    const fs::path out = scratch / "tiny_cnn";
    const auto script =
        fs::path(ONNXLENS_SOURCE_DIR) / "tests" / "app" / "data" / "export_tiny_cnn.py";
    auto r = runCli({"export", "--script", script.string(), "--out", out.string(), "--bench",
                     "--runs", "2", "--warmup", "0", "--threads", "1", "--quantize", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const Json doc = Json::parse(r.out);
    const fs::path int8Path = out / "model.int8.onnx";
    ASSERT_TRUE(fs::exists(int8Path));
    std::ifstream reportFile(out / "report.json");
    const Json report = Json::parse(reportFile);
    EXPECT_EQ(reportLine(report, "int8_numbers")["status"], "pass");
    EXPECT_EQ(reportLine(report, "int8_size")["status"], "pass");
    EXPECT_EQ(reportLine(report, "int8_latency")["status"], "pass");
    EXPECT_EQ(report["int8"]["bytes"].get<std::uint64_t>(), fs::file_size(int8Path));
    EXPECT_DOUBLE_EQ(
        report["int8"]["size_ratio"].get<double>(),
        static_cast<double>(fs::file_size(out / "model.onnx")) / fs::file_size(int8Path));
    EXPECT_EQ(report["int8"]["engine_latency"]["runs"].get<int>(), 2);
    EXPECT_EQ(doc["int8"], report["int8"]);

    // The int8 model passes the checker and, on every data set, reproduces PyTorch's outputs
    // within the stated tolerance; the report's SQNR is the weakest of them.
    auto loaded = loadModel(int8Path);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(runChecker(*loaded->proto).ok);
    engine::SessionOptions options;
    options.threads = 1;
    auto session = engine::Session::create(*loaded, options);
    ASSERT_TRUE(session) << session.error().message;
    double weakest = std::numeric_limits<double>::infinity();
    for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
        auto input = engine::readValueFile(out / set / "input_0.pb");
        auto expected = engine::readValueFile(out / set / "output_0.pb");
        ASSERT_TRUE(input && expected);
        auto outputs = (*session)->run({{"image", *input}});
        ASSERT_TRUE(outputs) << outputs.error().message;
        const auto a = expected->tensor().span<float>();
        const auto b = (*outputs)[0].tensor().span<float>();
        ASSERT_EQ(a.size(), b.size());
        double signal = 0, noise = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            signal += double(a[i]) * a[i], noise += (double(b[i]) - a[i]) * (double(b[i]) - a[i]);
        weakest = std::min(weakest, 10 * std::log10(signal / noise));
    }
    EXPECT_GE(weakest, 20.0);
    EXPECT_NEAR(report["int8"]["sqnr_db"].get<double>(), weakest, 1e-6);
}

}  // namespace
}  // namespace onnxlens::testing
