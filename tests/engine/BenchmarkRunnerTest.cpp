// The benchmark shared by the CLI and the GUI: statistics, the per-node profile and its
// aggregation, cancellation, progress, and the JSON and Markdown reports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "../model/SyntheticModels.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;

namespace {

struct Loaded {
    LoadedModel model;
    std::unique_ptr<engine::Session> session;
    std::map<std::string, engine::Value> feeds;
};

Loaded loadSample(const std::string& name) {
    Loaded l;
    auto model = loadModel(std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources/samples" / name /
                           "model.onnx");
    if (!model) throw std::runtime_error(model.error().message);
    l.model = std::move(model.value());
    engine::SessionOptions options;
    options.threads = 1;
    auto session = engine::Session::create(l.model, options);
    if (!session) throw std::runtime_error(session.error().message);
    l.session = std::move(session.value());
    auto feeds = engine::prepareFeeds(l.session->inputs(), {}, {}, 7);
    if (!feeds) throw std::runtime_error(feeds.error().message);
    l.feeds = std::move(feeds.value());
    return l;
}

TEST(BenchmarkRunner, StatisticsAreOrderedAndCountOnlyTheCountedRuns) {
    auto l = loadSample("mnist_cnn");
    std::vector<engine::BenchmarkProgress> reports;
    engine::BenchmarkRunner runner(*l.session, {3, 12, false});
    runner.setProgressCallback([&](const engine::BenchmarkProgress& p) { reports.push_back(p); });
    auto result = runner.run(l.feeds);
    ASSERT_TRUE(result) << result.error().message;
    const auto& s = result->statistics;
    EXPECT_EQ(s.runs, 12);
    EXPECT_EQ(result->samplesMs.size(), 12u);
    EXPECT_EQ(result->threads, 1);
    EXPECT_EQ(result->warmupRuns, 3);
    EXPECT_GT(s.minMs, 0);
    EXPECT_LE(s.minMs, s.medianMs);
    EXPECT_LE(s.medianMs, s.p90Ms);
    EXPECT_LE(s.p90Ms, s.p99Ms);
    EXPECT_LE(s.p99Ms, s.maxMs);
    EXPECT_LE(s.minMs, s.meanMs);
    EXPECT_LE(s.meanMs, s.maxMs);
    EXPECT_FALSE(result->profiled);
    EXPECT_TRUE(result->runProfiles.empty());
    // One report per run: 3 warm-up, then 12 counted, each phase counting up to its total.
    ASSERT_EQ(reports.size(), 15u);
    EXPECT_TRUE(reports[2].warmingUp);
    EXPECT_EQ(reports[2].done, 3);
    EXPECT_FALSE(reports[3].warmingUp);
    EXPECT_EQ(reports[3].done, 1);
    EXPECT_EQ(reports.back().done, 12);
    EXPECT_EQ(reports.back().total, 12);
    EXPECT_DOUBLE_EQ(reports.back().lastMs, result->samplesMs.back());
}

TEST(BenchmarkRunner, ProfileIsConsistentWithTheRunTimes) {
    auto l = loadSample("mnist_cnn");
    engine::BenchmarkRunner runner(*l.session, {2, 10, true});
    auto result = runner.run(l.feeds);
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_TRUE(result->profiled);
    ASSERT_EQ(result->runProfiles.size(), 10u);
    const int nodesPerRun = static_cast<int>(result->runProfiles[0].size());
    ASSERT_GT(nodesPerRun, 3);
    int mostlyNodeTime = 0;
    for (std::size_t r = 0; r < result->runProfiles.size(); ++r) {
        double nodeSum = 0;
        for (const auto& n : result->runProfiles[r])
            nodeSum += static_cast<double>(n.durationNs) / 1e6;
        // Node intervals are disjoint and nested inside the timed run: their sum cannot exceed it.
        EXPECT_LE(nodeSum, result->samplesMs[r]) << "run " << r;
        if (nodeSum >= 0.5 * result->samplesMs[r]) ++mostlyNodeTime;
    }
    // The rest of a run is the executor's bookkeeping (feeds copied in, slots released, outputs
    // copied out, two clock reads per node): for this model it is a small part, well under half
    // of the run, also in a sanitizer build. On a loaded machine a run this short (~0.1 ms) can
    // be preempted between two nodes, which only the run's time counts: so most runs, not all.
    EXPECT_GE(mostlyNodeTime, 6) << "runs whose nodes took at least half of the run";
    EXPECT_LE(result->nodeTimePerRunMs(), result->statistics.meanMs);

    double nodeShares = 0, typeShares = 0, typeTotal = 0, nodeTotal = 0;
    int calls = 0;
    for (const auto& n : result->nodes) {
        nodeShares += n.share;
        nodeTotal += n.totalMs;
        EXPECT_EQ(n.calls, 10) << n.nodeName;  // every top-level node runs once per run
        EXPECT_NEAR(n.perRunMs, n.totalMs / 10, 1e-9);
    }
    for (const auto& t : result->opTypes) {
        typeShares += t.share;
        typeTotal += t.totalMs;
        calls += t.calls;
    }
    EXPECT_EQ(static_cast<int>(result->nodes.size()), nodesPerRun);
    EXPECT_EQ(calls, 10 * nodesPerRun);
    EXPECT_NEAR(nodeShares, 1.0, 1e-9);
    EXPECT_NEAR(typeShares, 1.0, 1e-9);
    EXPECT_NEAR(nodeTotal, typeTotal, 1e-6);
    for (std::size_t i = 1; i < result->nodes.size(); ++i)
        EXPECT_GE(result->nodes[i - 1].totalMs, result->nodes[i].totalMs);
    // Op types come hottest first. (Which one is hottest is not asserted: on this small CNN the
    // fused oneDNN convolutions and MaxPool are close and swap places from run to run.)
    for (std::size_t i = 1; i < result->opTypes.size(); ++i)
        EXPECT_GE(result->opTypes[i - 1].totalMs, result->opTypes[i].totalMs);
}

TEST(BenchmarkRunner, UnnamedNodesAreProfiledUnderTheirProfileName) {
    using namespace onnxlens::testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"4", "8"});
    addNode(g, "Relu", "", {"x"}, {"relu_out"});
    addNode(g, "Neg", "named_neg", {"relu_out"}, {"y"});
    *g.add_output() = makeValueInfo("y", onnx::TensorProto::FLOAT, {"4", "8"});
    LoadedModel loaded;
    loaded.path = "unnamed.onnx";
    loaded.proto = model;
    engine::SessionOptions options;
    options.threads = 1;
    options.optimize = false;
    auto session = engine::Session::create(loaded, options);
    ASSERT_TRUE(session) << session.error().message;
    auto feeds = engine::prepareFeeds((*session)->inputs(), {}, {}, 1);
    ASSERT_TRUE(feeds);
    engine::BenchmarkRunner runner(**session, {0, 2, true});
    auto result = runner.run(*feeds);
    ASSERT_TRUE(result) << result.error().message;
    std::set<std::string> names;
    for (const auto& n : result->nodes) names.insert(n.nodeName);
    EXPECT_EQ(names, (std::set<std::string>{"Relu(relu_out)", "named_neg"}));
    EXPECT_EQ(profileNameOf(g.node(0)), "Relu(relu_out)");
    EXPECT_EQ(profileNameOf(g.node(1)), "named_neg");
}

TEST(BenchmarkRunner, CancelFromAnotherThreadStopsALongBenchmark) {
    auto l = loadSample("mnist_cnn");
    engine::BenchmarkRunner runner(*l.session, {0, 1'000'000, true});
    std::atomic<int> done{0};
    runner.setProgressCallback([&](const engine::BenchmarkProgress& p) { done.store(p.done); });
    std::optional<Result<engine::BenchmarkResult>> result;
    std::thread worker([&] { result.emplace(runner.run(l.feeds)); });
    while (done.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto cancelAt = std::chrono::steady_clock::now();
    runner.cancel();
    worker.join();
    const double stopMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cancelAt)
            .count();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(*result);
    EXPECT_TRUE(runner.isCancelled());
    EXPECT_EQ(result->error().message, "benchmark cancelled");
    EXPECT_LT(done.load(), 1'000'000);
    EXPECT_LT(stopMs, 2000.0);  // one run of this model is a few ms; the stop is between nodes
}

// A session's oneDNN primitives are made on the thread of its first run (here a benchmark's
// worker), then it runs on other threads and is destroyed on yet another, as in the GUI's engine
// process. oneDNN's own scratchpad belongs to the thread that made a primitive; the kernels give
// every primitive the running thread's (DnnlCallArgs.h). Before, with oneDNN held to its SSE4.1
// kernels (engine.onednn_max_isa_SSE41: an x86-64-v2 processor) the GEMM convolution's im2col
// scratchpad crashed the process in the next test.
TEST(BenchmarkRunner, SessionRunsOnAnyThreadAfterAWorkerMadeItsKernels) {
    auto l = std::make_unique<Loaded>(loadSample("mnist_cnn"));
    std::thread([&] {
        engine::BenchmarkRunner runner(*l->session, {1, 3, true});
        ASSERT_TRUE(runner.run(l->feeds));
    }).join();
    std::vector<std::vector<float>> outputs;
    auto runHere = [&] {
        auto out = l->session->run(l->feeds);
        ASSERT_TRUE(out) << out.error().message;
        const auto values = (*out)[0].tensor().span<float>();
        outputs.emplace_back(values.begin(), values.end());
    };
    for (int round = 0; round < 2; ++round) std::thread(runHere).join();
    runHere();
    ASSERT_EQ(outputs.size(), 3u);
    EXPECT_EQ(outputs[1], outputs[0]);
    EXPECT_EQ(outputs[2], outputs[0]);
    std::thread([&] { l.reset(); }).join();
    // A new session made and run here after the others' primitives went on other threads.
    auto again = loadSample("mnist_cnn");
    auto out = again.session->run(again.feeds);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ((*out)[0].tensor().numel(), static_cast<std::int64_t>(outputs[0].size()));
}

TEST(BenchmarkRunner, RejectsNonsenseCounts) {
    auto l = loadSample("mnist_cnn");
    engine::BenchmarkRunner runner(*l.session, {0, 0, false});
    auto result = runner.run(l.feeds);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("runs >= 1"), std::string::npos);
}

TEST(BenchmarkRunner, JsonAndMarkdownReportTheWholeResult) {
    auto l = loadSample("mnist_cnn");
    engine::BenchmarkRunner runner(*l.session, {1, 5, true});
    auto result = runner.run(l.feeds);
    ASSERT_TRUE(result) << result.error().message;
    result->model = "mnist_cnn/model.onnx";
    result->loadMs = 12.5;

    const auto doc = engine::benchmarkToJson(*result);
    for (const char* key : {"min_ms", "mean_ms", "median_ms", "p90_ms", "p99_ms", "max_ms",
                            "stddev_ms", "runs", "threads", "warmup", "load_ms", "samples_ms",
                            "op_types", "nodes", "node_time_per_run_ms"})
        EXPECT_TRUE(doc.contains(key)) << key;
    EXPECT_EQ(doc["runs"], 5);
    EXPECT_EQ(doc["samples_ms"].size(), 5u);
    EXPECT_DOUBLE_EQ(doc["median_ms"].get<double>(), result->statistics.medianMs);
    EXPECT_EQ(doc["nodes"].size(), result->nodes.size());
    EXPECT_EQ(doc["nodes"][0]["name"], result->nodes[0].nodeName);

    const auto dir =
        std::filesystem::temp_directory_path() / ("onnxlens-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(engine::writeBenchmarkJson(dir / "result.json", *result));
    std::ifstream jsonFile(dir / "result.json");
    EXPECT_EQ(nlohmann::json::parse(jsonFile), doc);
    ASSERT_TRUE(engine::writeBenchmarkMarkdown(dir / "result.md", *result));
    std::ifstream mdFile(dir / "result.md");
    const std::string md((std::istreambuf_iterator<char>(mdFile)),
                         std::istreambuf_iterator<char>());
    EXPECT_EQ(md, engine::benchmarkToMarkdown(*result));
    EXPECT_NE(md.find("# Benchmark: mnist_cnn/model.onnx"), std::string::npos);
    EXPECT_NE(md.find("| median (P50) |"), std::string::npos);
    EXPECT_NE(md.find("## Time per operator type"), std::string::npos);
    EXPECT_NE(md.find("| " + result->nodes[0].nodeName + " |"), std::string::npos);
    // Every table row has the same number of cells as its header.
    auto cellBorders = [](const std::string& line) {
        int borders = 0;
        for (std::size_t i = 0; i < line.size(); ++i)
            if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++borders;
        return borders;
    };
    std::istringstream lines(md);
    int tableBorders = 0;  // of the current table's header; 0 outside a table
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] != '|') {
            tableBorders = 0;
            continue;
        }
        if (tableBorders == 0) tableBorders = cellBorders(line);
        EXPECT_EQ(cellBorders(line), tableBorders) << line;
    }
    // A folder cannot be written as a file: an error naming it, no crash.
    auto failed = engine::writeBenchmarkJson(dir, *result);
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find(dir.string()), std::string::npos);
    std::filesystem::remove_all(dir);
}

}  // namespace
