#pragma once
// Measured time next to counted work: each profiled node's achieved GFLOP/s (its FLOPs from the
// cost model over its mean time) and its share of the processor's peak, the peak measured once
// per thread count by a short micro-benchmark of the build's own GEMM (the compute roof) and of
// an elementwise add over arrays larger than the caches (the memory roof). Shared by
// `onnxlens-cli bench --profile` and the Benchmark dock's roofline chart.
#include <string>
#include <vector>

#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/BenchmarkRunner.h"

namespace onnxlens::engine {

struct PeakThroughput {
    double gflops = 0;
    int threads = 0;
    std::string method;  // how it was measured, for the report
};

// The best of a few runs of a float32 MatMul (size x size x size) through the engine at `threads`
// intra-op threads. About 0.1 s at size 512.
Result<PeakThroughput> measurePeakThroughput(int threads, int size = 512);

struct PeakBandwidth {
    double gbPerSecond = 0;  // bytes moved (read + written) per second, in 1e9
    int threads = 0;
    std::string method;
};

// The memory roof: the best of a few runs of c = a + b over three float32 arrays of `megabytes`
// MB each (past the caches), split over `threads` threads (0: every core). About 0.1 s at 64 MB.
Result<PeakBandwidth> measureMemoryBandwidth(int threads, int megabytes = 64);

// The same, measured once per thread count in this process and then remembered (any thread;
// a second caller waits for the first measurement). Errors are not remembered.
Result<PeakThroughput> cachedPeakThroughput(int threads);
Result<PeakBandwidth> cachedMemoryBandwidth(int threads);

struct NodeRate {
    std::string nodeName, opType;
    double flops = 0;      // per run, from the cost model
    double perRunMs = 0;   // measured
    double gflops = 0;     // achieved: flops / time
    double intensity = 0;  // FLOPs per byte moved
    double peakShare = 0;  // gflops / peak (0 when no peak)
};

// Matches profiled nodes to the cost model's nodes by name (profiled names follow
// profileNameOf: the node's name or "OpType(first output)"). Nodes the optimizer created under
// a new name, or whose cost is unknown, are left out.
std::vector<NodeRate> nodeRates(const ModelCost& cost, const std::vector<NodeTimeSummary>& profiled,
                                double peakGflops);

// The peak the shares are of, never below a node's achieved rate: the synthetic 512^3 product can
// be slower than a kernel the model uses (a packed MatMul at "122 % of peak"). When the best
// node beats the measured peak, the peak becomes that node's rate, `method` says so (with the
// measured figure), and every rate's peakShare is taken of it again. No-op otherwise, and when
// no peak was measured (gflops 0).
void coverAchievedRates(PeakThroughput& peak, std::vector<NodeRate>& rates);

}  // namespace onnxlens::engine
