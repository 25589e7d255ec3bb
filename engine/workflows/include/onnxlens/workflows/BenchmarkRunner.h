#pragma once
// A benchmark of one compiled model, shared by `onnxlens-cli bench` and the GUI's Benchmark
// dock: warm-up runs (not counted), counted runs with one latency sample each, the statistics
// onnxruntime_perf_test reports, and optionally a per-node profile of every counted run,
// aggregated per node and per op type. Runs on the caller's thread; cancel() and the progress
// callback make it usable from a worker thread.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/LatencyStatistics.h"

namespace onnxlens::engine {

struct BenchmarkOptions {
    int warmupRuns = 5;
    int runs = 50;
    bool profile = false;  // time every node of every counted run
};

// One node over all profiled runs.
struct NodeTimeSummary {
    std::string nodeName, opType;  // nodeName as NodeProfile names it (profileNameOf)
    double totalMs = 0;            // summed over the runs
    double perRunMs = 0;
    int calls = 0;
    double share = 0;  // of the summed time of all nodes
};

struct BenchmarkResult {
    std::string model;  // for reports: the file the caller benchmarked
    int threads = 0;    // the session's
    // Counted runs that used fewer threads because other programs kept the cores busy
    // (SessionOptions::adaptThreadsToLoad), and the fewest any used (== threads when none did).
    int reducedRuns = 0;
    int fewestThreads = 0;
    int warmupRuns = 0;
    double loadMs = 0;      // filled by the caller when it timed the load
    double firstRunMs = 0;  // the session's first run (warm-up or counted), if this one
    WeightMemory weights;   // the session's, after the runs (reorders happen in runs)
    // The inputs' symbolic dims as the feeds bound them ("batch" -> 4, "x:0" for unnamed dims):
    // the cost model counts the same shapes the runs timed.
    std::map<std::string, std::int64_t> dims;
    std::vector<double> samplesMs;  // one per counted run, in run order
    LatencyStatistics statistics;
    bool profiled = false;
    std::vector<std::vector<NodeProfile>> runProfiles;  // one per counted run
    std::vector<NodeTimeSummary> nodes;                 // largest total first
    std::vector<OpTypeProfile> opTypes;                 // largest total first
    // The summed node time of an average run: a little below the mean latency (the executor's
    // own work between nodes is not in any node).
    double nodeTimePerRunMs() const;
};

struct BenchmarkProgress {
    bool warmingUp = false;
    int done = 0;   // runs finished in this phase
    int total = 0;  // runs in this phase
    double lastMs = 0;
};

class BenchmarkRunner {
  public:
    using ProgressCallback = std::function<void(const BenchmarkProgress&)>;

    explicit BenchmarkRunner(Session& session, BenchmarkOptions options = {});

    // Called on the running thread after every run (warm-up and counted).
    void setProgressCallback(ProgressCallback callback) { progress_ = std::move(callback); }
    // Any thread: stops the benchmark between nodes; run() then fails with isCancelled() set.
    void cancel() { control_.cancel.store(true); }
    bool isCancelled() const { return control_.cancel.load(); }

    // Fails with the engine's error (naming the node) or "benchmark cancelled".
    Result<BenchmarkResult> run(const std::map<std::string, Value>& feeds);

  private:
    Session& session_;
    BenchmarkOptions options_;
    RunControl control_;
    ProgressCallback progress_;
};

// Per-node totals over the runs, largest first. Nodes keep their first-seen order on ties.
std::vector<NodeTimeSummary> summarizeByNode(const std::vector<std::vector<NodeProfile>>& runs);

// The whole result. Keys: model, threads, warmup, runs, load_ms, first_run_ms, min_ms, mean_ms,
// median_ms, p90_ms, p99_ms, max_ms, stddev_ms, samples_ms, weights_mapped_bytes (initializers
// used in place in memory-mapped external files), weights_copied_bytes (initializers in the
// engine's own buffers plus the weight reorders kernels made; weights_reordered_bytes of those);
// when profiled also node_time_per_run_ms, op_types [{op_type, total_ms, per_run_ms, calls, share}]
// and nodes [{name, op_type, ...}].
nlohmann::json benchmarkToJson(const BenchmarkResult& result);
// "" when every counted run used the session's threads, else e.g. "1 thread in 38 of 50 runs:
// other programs kept the cores busy".
std::string reducedThreadsNote(const BenchmarkResult& result);
// A report for people: statistics table, op types and the nodes (largest first).
std::string benchmarkToMarkdown(const BenchmarkResult& result);

Status writeBenchmarkJson(const std::filesystem::path& file, const BenchmarkResult& result);
Status writeBenchmarkMarkdown(const std::filesystem::path& file, const BenchmarkResult& result);

}  // namespace onnxlens::engine
