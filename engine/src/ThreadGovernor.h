#pragma once
// How many of a session's threads each run uses while other programs keep the cores busy.
//
// A parallel region ends when its slowest thread does. On a machine where another program keeps
// a core busy, the thread the scheduler puts beside it waits a time slice (milliseconds) for its
// share of every region, and a run of many regions takes many slices: on the 2-core Xeon with one
// busy loop running, MiniLM took 12.6 ms at 2 threads against 2.1 at 1, the QOperator MobileNetV2
// 22.9 against 2.5 (ONNX Runtime: 6.6 and 3.2; docs/performance.md, issue 31). Bounding OpenMP's
// spinning (ThreadPool.h) does not help there: the thread waits with work in hand.
//
// The kernel counts, for every thread, the time it spent runnable but waiting for a CPU
// (run_delay in /proc/self/task/TID/schedstat). On an idle machine the threads of a run wait
// under 5% of its time; with a core taken, 30-90%. The governor reads the counts once per window
// of at least kWindowRunNs of run time: when a thread waited more than kContendedShare of it,
// the next runs use half the threads (down to one); after kFirstProbeNs at fewer threads one
// window tries twice as many again, and keeps them when no thread waited (else the next try comes
// after twice as long, at most kLongestProbeNs). On an idle machine nothing changes.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "onnxlens/engine/ThreadUse.h"

namespace onnxlens::engine {

class ThreadGovernor {
  public:
    // Fills its argument as readThreadWaitTimes does (within its capacity); false: no readings.
    using WaitReader = std::function<bool(ThreadWaitTimes&)>;
    using Clock = std::function<std::int64_t()>;  // monotonic nanoseconds

    static constexpr std::int64_t kWindowRunNs = 20'000'000;    // run time between readings
    static constexpr double kContendedShare = 0.2;              // of the window, one thread
    static constexpr std::int64_t kFirstProbeNs = 100'000'000;  // before trying more again
    static constexpr std::int64_t kLongestProbeNs = 3'200'000'000;
    // A pause between runs longer than this starts a new window (an interactive session's runs
    // minutes apart say nothing about each other's machine).
    static constexpr std::int64_t kStaleGapNs = 250'000'000;
    static constexpr std::size_t kMostThreads = 1024;  // threads read (the rest are not)

    // `adapt` false (or one thread requested): every run gets `requested`.
    ThreadGovernor(int requested, bool adapt, WaitReader reader = readThreadWaitTimes,
                   Clock clock = {});

    // The threads the next run uses; call endRun() when it ends.
    int beginRun();
    void endRun();
    ThreadUse use() const { return use_; }

  private:
    void closeWindow(std::int64_t now);
    std::int64_t longestWaitInWindow() const;

    bool adapt_;
    WaitReader reader_;
    Clock clock_;
    ThreadUse use_;
    int current_;
    int settled_;  // the count before a probe; current_ > settled_ while probing
    std::int64_t runStart_ = 0, lastRunEnd_ = -1;
    std::int64_t windowRunNs_ = 0;
    bool windowOpen_ = false;
    // The readings at the window's start and at its end: buffers reserved once, so the readings
    // allocate nothing between runs.
    ThreadWaitTimes windowStart_, reading_;
    std::int64_t probeAt_ = 0, probeInterval_ = kFirstProbeNs;
};

}  // namespace onnxlens::engine
