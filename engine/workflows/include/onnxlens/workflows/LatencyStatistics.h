#pragma once
// Latency statistics as onnxruntime_perf_test reports them: warm-up runs not counted, then
// min, mean, median (P50), P90, P99, max (and the standard deviation).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

struct LatencyStatistics {
    int runs = 0;
    double minMs = 0, meanMs = 0, medianMs = 0, p90Ms = 0, p99Ms = 0, maxMs = 0, stddevMs = 0;
    double p10Ms = 0;
    // stddev / mean: how much the runs disagree (0 when there is no mean).
    double coefficientOfVariation() const { return meanMs > 0 ? stddevMs / meanMs : 0; }
};

// Percentiles by linear interpolation between the closest ranks.
LatencyStatistics computeLatencyStatistics(std::vector<double> samplesMs);

// Two sides' latencies and what their ratio can be trusted to say.
struct LatencyComparison {
    LatencyStatistics a, b;    // a: the engine, b: the reference (PyTorch)
    bool interleaved = false;  // timed A, B, A, B ... (both saw the same machine load)
    double ratio = 0;          // a median / b median (0 when b has none)
    // The P10-P90 spreads overlap by more than the medians differ: the ratio is noise.
    bool withinNoise = false;
    // A side whose coefficient of variation is above kBusyCoefficientOfVariation: the machine
    // was busy and the ratio says little.
    bool busy = false;
    std::string note;  // "within noise", "the machine was busy: rerun (PyTorch's runs vary 43%)"
};

constexpr double kBusyCoefficientOfVariation = 0.20;

// Judges `a` against `b` (ratio, within noise, busy).
LatencyComparison compareLatencies(const LatencyStatistics& a, const LatencyStatistics& b,
                                   bool interleaved, const std::string& aName = "the engine",
                                   const std::string& bName = "the reference");

// One timed run: its milliseconds, or why it failed.
using TimedRun = std::function<Result<double>()>;

// Times `a` and `b` interleaved: `warmup` rounds not counted, then `runs` rounds of one run of
// each (A, B, A, B ...), so that both sides see the same machine load. `cancelled` is checked
// between runs (then the error is "cancelled").
Result<LatencyComparison> timeInterleaved(const TimedRun& a, const TimedRun& b, int warmup,
                                          int runs, const std::function<bool()>& cancelled = {},
                                          const std::string& aName = "the engine",
                                          const std::string& bName = "the reference");

struct OpTypeProfile {
    std::string opType;
    double totalMs = 0;
    int calls = 0;
    double share = 0;  // of the summed node time
};

// Per-op-type totals over all profiled runs, sorted by total time, largest first.
std::vector<OpTypeProfile> summarizeByOpType(const std::vector<std::vector<NodeProfile>>& runs);

// Chrome trace JSON (the format ONNX Runtime's profiler writes; opens in Perfetto):
// one complete event ("ph":"X") per node execution, one process per run.
Status writeChromeTrace(const std::filesystem::path& file,
                        const std::vector<std::vector<NodeProfile>>& runs);

}  // namespace onnxlens::engine
