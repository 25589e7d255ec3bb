// With OpenMP the pool is OpenMP's own team (see OpenMpThreads.h); without, an Eigen pool.
#include "onnxlens/engine/ThreadPool.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <thread>

#include "OpenMpThreads.h"
#include "onnxlens/engine/ThreadUse.h"

#ifdef _OPENMP
#include <omp.h>
#else
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#endif

namespace onnxlens::engine {

#ifdef _OPENMP
struct ThreadPool::Impl {};
#else
struct ThreadPool::Impl {
    explicit Impl(int n) : pool(n), device(&pool, n) {}
    Eigen::ThreadPool pool;
    Eigen::ThreadPoolDevice device;
};
#endif

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads_ = threads;
    active_ = threads;
#ifndef _OPENMP
    if (threads_ > 1) impl_ = std::make_unique<Impl>(threads_);
#endif
}

ThreadPool::~ThreadPool() = default;

namespace {

std::string waitPolicy() {
#ifdef _OPENMP
    if (const char* policy = std::getenv("OMP_WAIT_POLICY"))
        return std::string("OpenMP, OMP_WAIT_POLICY=") + policy;
    if (const char* spins = std::getenv("GOMP_SPINCOUNT"))
        return std::string("OpenMP, idle threads spin GOMP_SPINCOUNT=") + spins + " then sleep";
    return "OpenMP, libgomp's default spinning";
#else
    return "Eigen thread pool";
#endif
}

}  // namespace

std::string threadWaitSummary() {
    std::string summary = waitPolicy();
    if (adaptiveThreadsTurnedOff()) return summary + "; thread count fixed";
    ThreadWaitTimes probe;
    probe.reserve(1);
    return summary + (readThreadWaitTimes(probe)
                          ? "; fewer threads while other programs keep the cores busy"
                          : "; thread count fixed (the kernel reports no waits for a CPU)");
}

void boundOpenMpSpinning(char** argv) {
#ifdef _OPENMP
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") ||
        std::getenv("ONNXLENS_KEEP_OPENMP_SPINNING") || !argv || !argv[0])
        return;
    if (::setenv("GOMP_SPINCOUNT", kBoundedOpenMpSpinCount, 0) != 0) return;
    ::execv("/proc/self/exe", argv);
    // Not replaced (no /proc): this process goes on with libgomp's default; its children, which
    // inherit the variable, get the bounded spinning.
#else
    (void)argv;
#endif
}

void applyThreadCountToCallingThread([[maybe_unused]] int threads) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
}

double flopsPerThread() {
    static const double value = [] {
        if (const char* text = std::getenv("ONNXLENS_FLOPS_PER_THREAD")) {
            char* end = nullptr;
            const double parsed = std::strtod(text, &end);
            if (end != text && parsed >= 1.0 && parsed <= 1.0e12) return parsed;
        }
        return kSerialWorkFlops / 2.0;
    }();
    return value;
}

int threadsWorthFor(double flops, int available) {
    if (available <= 1 || !(flops > 0.0)) return 1;
    const double threshold = flopsPerThread() * static_cast<double>(std::min(available, 4));
    return flops >= threshold ? available : 1;
}

int threadCountOfCallingThread() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void ThreadPool::parallelFor(std::int64_t n, double costPerItem,
                             const std::function<void(std::int64_t, std::int64_t)>& fn) {
    if (n <= 0) return;
    // Below ~20k operations the hand-off costs more than it saves: each parallel region is a
    // fork and a join. The limit was 1M while tuned on a loaded machine (there a join waits for
    // a thread the scheduler has not run yet); on an idle machine, where the targets are
    // measured, 20k ran the small and medium models of the speed table faster at 2 threads (see
    // kSerialWorkFlops in OpenMpThreads.h for the numbers). Each thread of the team needs a fifth
    // of what a oneDNN primitive's thread needs (flopsPerThread): these loops are simpler.
    const double work = static_cast<double>(n) * costPerItem;
    const int worth = threadsWorthFor(work * 5.0, threads());
    if (worth == 1 || n == 1) {
        fn(0, n);
        return;
    }
#ifdef _OPENMP
    // Already inside a parallel region (a kernel called from a parallel loop): run inline.
    if (omp_in_parallel()) {
        fn(0, n);
        return;
    }
    // Equal contiguous ranges, one per thread; an exception in any range is rethrown here
    // (none may leave an OpenMP region). The team is the whole pool even when there are fewer
    // items than threads (those threads get empty ranges): a team whose size changes from one
    // region to the next makes libgomp re-dock its idle threads, which on 16 cores made kernels
    // sized to their work 4x slower (OpenMpThreads.h).
    const int team = worth;
    std::exception_ptr failure;
#pragma omp parallel num_threads(team)
    {
        const std::int64_t t = omp_get_thread_num(), count = omp_get_num_threads();
        const std::int64_t begin = n * t / count, end = n * (t + 1) / count;
        try {
            if (begin < end) fn(begin, end);
        } catch (...) {
#pragma omp critical(onnxlens_thread_pool_failure)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
#else
    if (!impl_) {
        fn(0, n);
        return;
    }
    Eigen::TensorOpCost cost(0, 0, std::max(1.0, costPerItem));
    impl_->device.parallelFor(
        static_cast<Eigen::Index>(n), cost, [&fn](Eigen::Index begin, Eigen::Index end) {
            fn(static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end));
        });
#endif
}

}  // namespace onnxlens::engine
