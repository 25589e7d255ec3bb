#pragma once
// What the runs of a session used of its threads, and what the kernel says they waited for a CPU
// (the session runs on fewer threads while other programs keep the cores busy: ThreadGovernor.h).
#include <cstdint>
#include <string>
#include <vector>

namespace onnxlens::engine {

// Nanoseconds a thread of this process has spent runnable but waiting for a CPU (run_delay in
// /proc/self/task/TID/schedstat).
struct ThreadWait {
    int tid = 0;
    std::int64_t waitedNs = 0;
};
using ThreadWaitTimes = std::vector<ThreadWait>;
// Fills `out` (cleared first) with every thread's, in thread id order, at most out.capacity()
// of them: no memory is allocated, so reading between runs leaves the heap the runs' tensors use
// as it was (a long-lived block among them made every run take fresh pages: 1.75 -> 2.4 ms a run
// on the QOperator MobileNetV2). False where the kernel does not report it (no /proc, no
// schedstat).
bool readThreadWaitTimes(ThreadWaitTimes& out);

// The environment's ONNXLENS_ADAPTIVE_THREADS=0: every run keeps the session's thread count.
bool adaptiveThreadsTurnedOff();

// "1 thread in 38 of 50 runs: other programs kept the cores busy" ("" when no run was reduced);
// "down to 4 threads in ..." when `requested` is given and the fewest is below half of it.
std::string reducedThreadsNote(std::int64_t reducedRuns, std::int64_t runs, int fewest,
                               int requested = 0);

struct ThreadUse {
    int requested = 1;
    int fewest = 1;                // the fewest threads any run used
    std::int64_t runs = 0;         // runs so far
    std::int64_t reducedRuns = 0;  // of those, runs on fewer threads than requested
};

}  // namespace onnxlens::engine
