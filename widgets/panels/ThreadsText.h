#pragma once
// The threads a benchmark's or a decode's runs used, as the Benchmark and Decode panels show them.
#include <QString>
#include <cstdint>

namespace onnxlens::widgets {

// "2 threads"; when some runs used fewer (other programs kept the cores busy:
// SessionOptions::adaptThreadsToLoad), in full "2 threads (1 thread in 38 of 50 runs: other
// programs kept the cores busy)", brief "2 threads, 38 of 50 runs on 1: cores busy".
QString threadsText(int threads, std::int64_t reducedRuns, std::int64_t runs, int fewest,
                    bool brief);

}  // namespace onnxlens::widgets
