#pragma once
// The threads a benchmark's or a decode's runs used, as the Benchmark and Decode panels show them.
#include <QString>
#include <cstdint>

namespace onnxlens::widgets {

// How much to say: when some runs used fewer threads (other programs kept the cores busy:
// SessionOptions::adaptThreadsToLoad), Full is "2 threads (1 thread in 38 of 50 runs: other
// programs kept the cores busy)", Status "2 threads, 38 of 50 runs on 1: cores busy" and Cell (a
// table's narrow value column) "2 (1 in 38 of 50 runs)". Otherwise "2 threads", or "2" in a Cell.
enum class ThreadsTextForm { Full, Status, Cell };

QString threadsText(int threads, std::int64_t reducedRuns, std::int64_t runs, int fewest,
                    ThreadsTextForm form);

}  // namespace onnxlens::widgets
