// onnxlens-cli diff: exit codes (0 identical / agreeing, 1 different, 2 error), the JSON of the
// structure, and --numeric finding a weight planted deep in the sample CNN.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "CliModelFiles.h"
#include "CliRunner.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"

using namespace onnxlens::testing;
using nlohmann::json;

namespace {

// The sample CNN with one element of its last Conv's weight moved by 0.5; that Conv's name.
std::pair<onnx::ModelProto, std::string> withPlantedWeight() {
    auto loaded = onnxlens::loadModel(sampleModel("mnist_cnn"));
    EXPECT_TRUE(loaded.ok());
    onnx::ModelProto m = *loaded->proto;
    auto& g = *m.mutable_graph();
    int lastConv = -1;
    for (int i = 0; i < g.node_size(); ++i)
        if (g.node(i).op_type() == "Conv") lastConv = i;
    const std::string weight = g.node(lastConv).input(1);
    for (auto& init : *g.mutable_initializer())
        if (init.name() == weight) {
            auto t = onnxlens::engine::tensorFromProto(init);
            t.data<float>()[0] += 0.5f;
            init = onnxlens::engine::tensorToProto(t, weight);
        }
    return {m, g.node(lastConv).name()};
}

}  // namespace

TEST(CliDiff, IdenticalModelsExitZero) {
    const auto model = sampleModel("mnist_cnn").string();
    auto r = runCli({"diff", model, model});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("identical"), std::string::npos) << r.out;
    r = runCli({"diff", model, model, "--numeric", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto doc = json::parse(r.out);
    EXPECT_TRUE(doc["agree"].get<bool>());
    EXPECT_TRUE(doc["first_divergence"].is_null());
    EXPECT_GT(doc["values_compared"].get<int>(), 5);
}

TEST(CliDiff, PlantedWeightIsFoundAndExitsOne) {
    CliScratchDir dir;
    auto [changed, conv] = withPlantedWeight();
    const auto b = writeModel(dir, "changed.onnx", changed);
    const auto a = sampleModel("mnist_cnn").string();
    auto r = runCli({"diff", a, b.string(), "--json"});
    ASSERT_EQ(r.exitCode, 1) << r.err;
    auto doc = json::parse(r.out);
    EXPECT_FALSE(doc["identical"].get<bool>());
    ASSERT_EQ(doc["initializers"].size(), 1u);
    EXPECT_NEAR(doc["initializers"][0]["max_abs_difference"].get<double>(), 0.5, 1e-6);

    r = runCli({"diff", a, b.string(), "--numeric", "--json"});
    ASSERT_EQ(r.exitCode, 1) << r.err;
    doc = json::parse(r.out);
    EXPECT_EQ(doc["first_divergence"]["node_a"].get<std::string>(), conv);
    EXPECT_EQ(doc["top_error_added"][0]["node_a"].get<std::string>(), conv);
    r = runCli({"diff", a, b.string(), "--numeric"});
    EXPECT_NE(r.out.find("first divergence: "), std::string::npos) << r.out;
}

TEST(CliDiff, ErrorsExitTwo) {
    CliScratchDir dir;
    const auto a = sampleModel("mnist_cnn").string();
    auto r = runCli({"diff", a, (dir / "missing.onnx").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("missing.onnx"), std::string::npos) << r.err;
    r = runCli({"diff", a});
    EXPECT_EQ(r.exitCode, 2);
    // Inputs that do not fit the second model: an error naming it.
    r = runCli({"diff", a, writeModel(dir, "relu.onnx", reluModel()).string(), "--numeric"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("relu.onnx"), std::string::npos) << r.err;
}
