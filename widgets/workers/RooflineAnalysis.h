#pragma once
// Measured time next to counted work for one benchmark result: the processor's roofs (GEMM peak
// and memory bandwidth at the benchmark's thread count, measured once per thread count) and each
// profiled node's achieved GFLOP/s and arithmetic intensity from the cost model at the dims the
// benchmark ran with. Runs on a worker thread (QtConcurrent): the roofs take ~0.3 s the first
// time and the cost model runs shape inference.
#include <QString>
#include <memory>
#include <vector>

#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/Roofline.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens::widgets {

struct RooflineAnalysis {
    engine::PeakThroughput peak;          // gflops 0 when it could not be measured
    engine::PeakBandwidth bandwidth;      // gbPerSecond 0 when it could not be measured
    std::vector<engine::NodeRate> rates;  // the profiled nodes the cost model counted
    QString error;                        // why something is missing (shown, not fatal)
    // The ridge point: the arithmetic intensity where the two roofs meet (FLOPs/byte).
    double ridgeIntensity() const;
};

RooflineAnalysis analyseRoofline(const ModelDocument& document,
                                 const engine::BenchmarkResult& result);

}  // namespace onnxlens::widgets
