#pragma once
// Latency statistics as onnxruntime_perf_test reports them: warm-up runs not counted, then
// min, mean, median (P50), P90, P99, max (and the standard deviation).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

struct LatencyStatistics {
    int runs = 0;
    double minMs = 0, meanMs = 0, medianMs = 0, p90Ms = 0, p99Ms = 0, maxMs = 0, stddevMs = 0;
};

// Percentiles by linear interpolation between the closest ranks.
LatencyStatistics computeLatencyStatistics(std::vector<double> samplesMs);

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
