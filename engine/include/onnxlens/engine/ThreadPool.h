#pragma once
// The intra-op thread pool shared by every kernel that can split its work.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace onnxlens::engine {

class ThreadPool {
  public:
    explicit ThreadPool(int threads);  // threads <= 0: the number of cores
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // The threads the kernels use now: the session's count, or fewer while other programs keep
    // the cores busy (ThreadGovernor, set by the session before each run).
    int threads() const { return active_.load(std::memory_order_relaxed); }
    int requestedThreads() const { return threads_; }
    void setActiveThreads(int threads) {
        active_.store(std::clamp(threads, 1, threads_), std::memory_order_relaxed);
    }
    // Calls fn(begin, end) over [0, n) in chunks; `costPerItem` is a rough count of
    // floating-point operations per item, used to decide whether splitting pays.
    // Runs inline with one thread or small work. Blocks until all chunks are done.
    void parallelFor(std::int64_t n, double costPerItem,
                     const std::function<void(std::int64_t, std::int64_t)>& fn);

  private:
    struct Impl;
    int threads_;
    std::atomic<int> active_;
    std::unique_ptr<Impl> impl_;
};

// libgomp, whose team the pool is, lets an idle worker spin for a long time (GOMP_SPINCOUNT,
// 300,000 by default) before it sleeps. On a machine whose cores other programs keep busy (a
// desktop with a browser, a build), the spinning worker and the thread with the work preempt each
// other and every parallel region waits for a time slice: on a 2-core machine at load 8, a 30 M
// decoder at 2 threads ran 2.2 tokens/s against 45 at 1 thread. Bounded at 10,000 spins it ran
// 13.3 there and as fast as with the default on the idle machine (119.7 against 112.6 tokens/s;
// 1,000 spins lost a third there, passive more: docs/performance.md).
// libgomp reads the variable once, when it is loaded, so the programs that run the engine call
// this first thing in main(): when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, it sets
// GOMP_SPINCOUNT to kBoundedOpenMpSpinCount and runs the program again from its start (execv of
// /proc/self/exe with the same arguments); the new process inherits it, as do the processes it
// starts. Returns when either is set (the user's choice is kept) or when the exec fails (nothing
// changed). ONNXLENS_KEEP_OPENMP_SPINNING=1 keeps libgomp's default.
inline constexpr const char* kBoundedOpenMpSpinCount = "10000";
void boundOpenMpSpinning(char** argv);
// How idle pool threads wait in this process, and whether runs adapt their thread count to a
// busy machine (ThreadUse.h), for --version and Help > About: "OpenMP, idle threads spin
// GOMP_SPINCOUNT=10000 then sleep; fewer threads while other programs keep the cores busy".
std::string threadWaitSummary();

}  // namespace onnxlens::engine
