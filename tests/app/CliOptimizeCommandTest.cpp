// onnxlens-cli optimize writes the graph the engine runs; past the external-data threshold (the
// 2 GB of the ONNX convention, lowered here through the test hook) its weights go to a file
// beside the model, and the written model still runs and matches the original's test data.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "CliModelFiles.h"
#include "CliRunner.h"

namespace fs = std::filesystem;
using onnxlens::testing::runCli;

namespace {

fs::path sampleModel(const std::string& name) {
    return fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / name / "model.onnx";
}

TEST(CliOptimize, WeightsPastTheThresholdGoBesideTheModelAndItStillMatches) {
    onnxlens::testing::CliScratchDir scratch;
    const fs::path model = sampleModel("mnist_cnn");
    const fs::path inlined = scratch / "inline.onnx", external = scratch / "external.onnx";
    ASSERT_EQ(runCli({"optimize", model.string(), inlined.string()}).exitCode, 0);
    EXPECT_FALSE(fs::exists(inlined.string() + ".data"));

    ::setenv("ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD", "1024", 1);
    auto written = runCli({"optimize", model.string(), external.string()});
    ::unsetenv("ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD");
    ASSERT_EQ(written.exitCode, 0) << written.err;
    const fs::path data = external.string() + ".data";
    ASSERT_TRUE(fs::exists(data));
    EXPECT_LT(fs::file_size(external), fs::file_size(inlined) / 2);
    EXPECT_GT(fs::file_size(data), fs::file_size(inlined) / 2);

    // The model with external weights reproduces the original's reference outputs.
    auto compared = runCli({"compare", external.string(), "--data-set",
                            (model.parent_path() / "test_data_set_0").string()});
    EXPECT_EQ(compared.exitCode, 0) << compared.out << compared.err;
}

}  // namespace
