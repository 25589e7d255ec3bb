#pragma once
// A shape sweep: one compiled session benchmarked once per combination of symbolic-dim values
// (batch=1,2,4,8 x sequence=64,128), latency and items per second for each. Shared by
// `onnxlens-cli bench --sweep` and the Benchmark dock's Sweep tab. Runs on the caller's thread;
// cancel() and the progress callback make it usable from a worker thread.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::engine {

// One symbol and the values it takes: "batch=1,2,4,8".
struct SweepAxis {
    std::string symbol;
    std::vector<std::int64_t> values;
};

// Parses "SYMBOL=V1,V2,..." (values positive integers). The error quotes the text.
Result<SweepAxis> parseSweepAxis(const std::string& text);

// Every combination of the axes' values, the first axis varying slowest, in the order given.
std::vector<SymbolBindings> sweepCombinations(const std::vector<SweepAxis>& axes);

// Items one run processes: the value of a swept symbol whose name holds "batch" (any case),
// else 1.
std::int64_t itemsPerRun(const SymbolBindings& dims);

// Empty when every axis names a symbolic dim of `inputs`; else the message naming the symbol
// and listing the model's symbols.
std::string unknownSweepSymbol(const std::vector<Session::IoInfo>& inputs,
                               const std::vector<SweepAxis>& axes);

struct SweepPoint {
    SymbolBindings dims;  // the swept symbols only
    std::string error;    // the model rejected these dims (inputs or run); the figures are 0
    LatencyStatistics statistics;
    double itemsPerSecond = 0;  // itemsPerRun / median
    bool ok() const { return error.empty(); }
};

struct SweepProgress {
    int point = 0;   // index of the combination running
    int points = 0;  // combinations in all
    BenchmarkProgress run;
};

class SweepRunner {
  public:
    // The inputs for one combination (the sweep's dims merged into any fixed ones by the caller).
    using FeedsForDims = std::function<Result<std::map<std::string, Value>>(const SymbolBindings&)>;
    using ProgressCallback = std::function<void(const SweepProgress&)>;

    SweepRunner(Session& session, int warmupRuns, int runs);

    void setProgressCallback(ProgressCallback callback) { progress_ = std::move(callback); }
    // Any thread: stops between two nodes; run() then fails with isCancelled() set.
    void cancel();
    bool isCancelled() const { return cancelled_.load(); }
    // Called after each combination, on the running thread (a table can fill as it goes).
    void setPointCallback(std::function<void(const SweepPoint&)> callback) {
        pointDone_ = std::move(callback);
    }

    // One point per combination, in order. A combination the model rejects is a point with its
    // error, and the sweep goes on; only cancellation fails the whole sweep.
    Result<std::vector<SweepPoint>> run(const std::vector<SymbolBindings>& combinations,
                                        const FeedsForDims& feeds);

  private:
    Session& session_;
    int warmupRuns_, runs_;
    std::atomic<bool> cancelled_{false};
    std::mutex mutex_;                    // guards current_ against cancel()
    BenchmarkRunner* current_ = nullptr;  // the running point's benchmark
    ProgressCallback progress_;
    std::function<void(const SweepPoint&)> pointDone_;
};

// "batch=4 sequence=128"
std::string sweepLabel(const SymbolBindings& dims);

}  // namespace onnxlens::engine
