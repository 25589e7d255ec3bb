// onnxlens-cli bench on top of the engine's BenchmarkRunner: the JSON keys scripts rely on, the
// per-node profile, the text output, and bad counts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "onnxlens/model/TensorFile.h"

using onnxlens::testing::runCli;
namespace fs = std::filesystem;

namespace {

std::string mnist() {
    return (fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / "mnist_cnn" / "model.onnx")
        .string();
}

TEST(CliBenchCommand, JsonWithoutProfileHasTheStatisticsAndTheSamples) {
    auto r = runCli({"bench", mnist(), "--warmup", "1", "--runs", "6", "--threads", "1", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    for (const char* key : {"min_ms", "mean_ms", "median_ms", "p90_ms", "p99_ms", "max_ms",
                            "stddev_ms", "runs", "threads", "warmup", "load_ms", "samples_ms"})
        EXPECT_TRUE(doc.contains(key)) << key;
    EXPECT_FALSE(doc.contains("op_types"));
    EXPECT_FALSE(doc.contains("nodes"));
    ASSERT_EQ(doc["samples_ms"].size(), 6u);
    double lo = 1e300, hi = 0;
    for (double v : doc["samples_ms"]) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_DOUBLE_EQ(doc["min_ms"].get<double>(), lo);
    EXPECT_DOUBLE_EQ(doc["max_ms"].get<double>(), hi);
    EXPECT_EQ(doc["warmup"], 1);
}

TEST(CliBenchCommand, ProfileListsEveryNodeOnceWithSharesSummingToOne) {
    onnxlens::testing::CliScratchDir scratch;
    const fs::path trace = scratch / "trace.json";
    auto r = runCli({"bench", mnist(), "--warmup", "1", "--runs", "5", "--threads", "1",
                     "--profile", trace.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_TRUE(doc["nodes"].is_array());
    std::set<std::string> names;
    double share = 0, perRun = 0;
    for (const auto& node : doc["nodes"]) {
        names.insert(node["name"].get<std::string>());
        EXPECT_EQ(node["calls"], 5);
        share += node["share"].get<double>();
        perRun += node["per_run_ms"].get<double>();
    }
    EXPECT_EQ(names.size(), doc["nodes"].size());  // one row per node
    EXPECT_NEAR(share, 1.0, 1e-9);
    EXPECT_NEAR(perRun, doc["node_time_per_run_ms"].get<double>(), 1e-9);
    EXPECT_LE(perRun, doc["mean_ms"].get<double>());
    EXPECT_EQ(doc["profile"], trace.string());
    EXPECT_TRUE(fs::exists(trace));
}

TEST(CliBenchCommand, TextOutputNamesTheStatisticsAndTheOpTypes) {
    onnxlens::testing::CliScratchDir scratch;
    auto r = runCli({"bench", mnist(), "--warmup", "0", "--runs", "3", "--threads", "1",
                     "--profile", (scratch / "t.json").string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("3 runs after 0 warm-up"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("median"), std::string::npos);
    EXPECT_NE(r.out.find("Conv"), std::string::npos);
}

TEST(CliBenchCommand, BadCountsAreUsageErrors) {
    auto r = runCli({"bench", mnist(), "--runs", "0"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--runs"), std::string::npos) << r.err;
}

}  // namespace

// Measured time next to counted work: achieved GFLOP/s per node from the cost model's FLOPs, and
// the share of the peak of the build's own GEMM.
TEST(CliBenchCommand, ProfileAddsAchievedGflopsAndThePeakItIsMeasuredAgainst) {
    onnxlens::testing::CliScratchDir scratch;
    auto r = runCli({"bench", mnist(), "--warmup", "1", "--runs", "3", "--threads", "1",
                     "--profile", (scratch / "trace.json").string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_GT(doc["peak_gflops"].get<double>(), 0.0);
    EXPECT_NE(doc["peak_method"].get<std::string>().find("MatMul"), std::string::npos);
    int withRate = 0;
    for (const auto& node : doc["nodes"]) {
        if (!node.contains("gflops")) continue;
        ++withRate;
        const double expected =
            node["flops"].get<double>() / (node["per_run_ms"].get<double>() * 1e-3) / 1e9;
        EXPECT_NEAR(node["gflops"].get<double>(), expected, 1e-9 * std::max(1.0, expected));
        EXPECT_NEAR(node["peak_share"].get<double>(), expected / doc["peak_gflops"].get<double>(),
                    1e-9);
    }
    EXPECT_GT(withRate, 0);
}

// The FLOPs are counted at the shapes that ran: a batch of 3 read from an input file counts 3
// times the FLOPs of the default batch of 1 (they were counted at batch 1 whatever the file).
TEST(CliBenchCommand, ProfileCountsFlopsAtTheShapesOfTheInputFiles) {
    onnxlens::testing::CliScratchDir scratch;
    onnx::TensorProto image;
    image.set_name("image");
    image.set_data_type(onnx::TensorProto::FLOAT);
    for (int d : {3, 1, 28, 28}) image.add_dims(d);
    for (int i = 0; i < 3 * 28 * 28; ++i) image.add_float_data(static_cast<float>(i % 17) / 17.0f);
    const fs::path file = scratch / "image.npy";
    ASSERT_TRUE(onnxlens::writeNpyFile(file, image));
    auto flopsOf = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{
            "bench", mnist(),     "--warmup", "0",         "--runs",
            "1",     "--threads", "1",        "--profile", (scratch / "t.json").string(),
            "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        std::map<std::string, double> flops;
        if (r.exitCode != 0) return flops;
        const auto doc = nlohmann::json::parse(r.out);
        for (const auto& node : doc["nodes"])
            if (node.contains("flops"))
                flops[node["name"].get<std::string>()] = node["flops"].get<double>();
        return flops;
    };
    const auto single = flopsOf({});
    const auto three = flopsOf({"--input", "image=" + file.string()});
    ASSERT_FALSE(single.empty());
    ASSERT_EQ(single.size(), three.size());
    for (const auto& [name, flops] : single) {
        ASSERT_TRUE(three.count(name)) << name;
        EXPECT_DOUBLE_EQ(three.at(name), 3.0 * flops) << name;
    }
}

TEST(CliBenchCommand, SweepBenchmarksEveryShapeInOneSession) {
    auto r = runCli({"bench", mnist(), "--warmup", "0", "--runs", "2", "--threads", "1", "--sweep",
                     "batch=1,3", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["sweep"].size(), 2u);
    EXPECT_EQ(doc["sweep"][1]["dims"]["batch"], 3);
    for (const auto& row : doc["sweep"]) {
        ASSERT_TRUE(row.contains("median_ms")) << row.dump();
        const double batch = row["dims"]["batch"].get<double>();
        EXPECT_NEAR(row["items_per_second"].get<double>(),
                    1000.0 * batch / row["median_ms"].get<double>(), 1e-6);
    }
    auto unknown = runCli({"bench", mnist(), "--sweep", "sequence=1,2"});
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("'sequence'"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("batch"), std::string::npos) << unknown.err;
    EXPECT_EQ(runCli({"bench", mnist(), "--sweep", "batch=1,x"}).exitCode, 2);
}
