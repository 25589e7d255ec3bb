// `onnxlens-cli render`: the GUI's scene drawn without a window, as SVG or PNG.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../model/SyntheticModels.h"
#include "CliRunner.h"

namespace onnxlens {
namespace {

namespace fs = std::filesystem;

class CliRender : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("onnxlens-render-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        model_ = (dir_ / "cnn.onnx").string();
        std::ofstream out(model_, std::ios::binary);
        testing::makeSmallCnn()->SerializeToOstream(&out);
    }
    void TearDown() override { fs::remove_all(dir_); }

    static std::string slurp(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    fs::path dir_;
    std::string model_;
};

TEST_F(CliRender, WritesAnSvgWithTheNodeLabelsAndShapes) {
    const auto svg = dir_ / "graph.svg";
    auto r = testing::runCli({"render", model_, "--out", svg.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("wrote"), std::string::npos);
    const std::string text = slurp(svg);
    ASSERT_NE(text.find("<svg"), std::string::npos);
    EXPECT_NE(text.rfind("</svg>"), std::string::npos);
    for (const char* label :
         {">Conv<", ">Relu<", ">MaxPool<", ">Gemm<", ">Softmax<", ">input<", ">probabilities<"})
        EXPECT_NE(text.find(label), std::string::npos) << label;
    // The conv output's shape from shape inference, with its symbolic batch dim.
    EXPECT_NE(text.find(">batch<"), std::string::npos);
    EXPECT_NE(text.find(">26<"), std::string::npos);
}

TEST_F(CliRender, WritesAPngOfTheReportedSize) {
    const auto png = dir_ / "graph.png";
    auto r = testing::runCli({"render", model_, "--out", png.string(), "--json", "--scale", "2"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["nodes"], 6);
    const std::string bytes = slurp(png);
    ASSERT_GT(bytes.size(), 24u);
    ASSERT_EQ(bytes.substr(1, 3), "PNG");
    auto be32 = [&](std::size_t at) {
        return (static_cast<unsigned char>(bytes[at]) << 24) |
               (static_cast<unsigned char>(bytes[at + 1]) << 16) |
               (static_cast<unsigned char>(bytes[at + 2]) << 8) |
               static_cast<unsigned char>(bytes[at + 3]);
    };
    // IHDR width and height: the content rectangle at scale 2.
    EXPECT_NEAR(be32(16), 2 * doc["width"].get<double>(), 2);
    EXPECT_NEAR(be32(20), 2 * doc["height"].get<double>(), 2);
}

TEST_F(CliRender, UsageAndInputErrorsExitWith2) {
    EXPECT_EQ(testing::runCli({"render", model_}).exitCode, 2);
    EXPECT_EQ(testing::runCli({"render", model_, "--out", (dir_ / "x.bmp").string()}).exitCode, 2);
    auto missing = testing::runCli(
        {"render", (dir_ / "missing.onnx").string(), "--out", (dir_ / "x.svg").string()});
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("missing.onnx"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens
