// How many threads a kernel's work gets: threadsWorthFor, ThreadBudget and the pool's team size.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "../../engine/src/OpenMpThreads.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine {
namespace {

TEST(ThreadBudget, WorkRunsOnTheWholeTeamOrOnOneThread) {
    const double share = flopsPerThread();
    ASSERT_GE(share, 1.0);
    EXPECT_EQ(threadsWorthFor(share * 100.0, 1), 1);
    EXPECT_EQ(threadsWorthFor(share * 100.0, 0), 1);
    EXPECT_EQ(threadsWorthFor(share * 1.99, 16), 1);
    EXPECT_EQ(threadsWorthFor(share * 2.0, 2), 2);
    EXPECT_EQ(threadsWorthFor(share * 3.9, 4), 1);
    EXPECT_EQ(threadsWorthFor(share * 4.0, 4), 4);
    EXPECT_EQ(threadsWorthFor(share * 2.0, 16), 1);  // never part of the team
    EXPECT_EQ(threadsWorthFor(share * 3.9, 16), 1);
    EXPECT_EQ(threadsWorthFor(share * 4.0, 16), 16);  // the limit stops growing at 4 threads
    EXPECT_EQ(threadsWorthFor(share * 1.0e9, 16), 16);
    EXPECT_EQ(threadsWorthFor(share * 1.0e9, 3), 3);
    // No work, negative or NaN counts (a cost model's unknown) keep the kernel on one thread.
    EXPECT_EQ(threadsWorthFor(0.0, 16), 1);
    EXPECT_EQ(threadsWorthFor(-5.0, 16), 1);
    EXPECT_EQ(threadsWorthFor(std::numeric_limits<double>::quiet_NaN(), 16), 1);
    EXPECT_EQ(threadsWorthFor(std::numeric_limits<double>::infinity(), 16), 16);
    // More work never buys fewer threads.
    int previous = 1;
    for (double flops = 1.0; flops < share * 64.0; flops *= 1.3) {
        const int threads = threadsWorthFor(flops, 16);
        EXPECT_GE(threads, previous) << flops;
        previous = threads;
    }
}

TEST(ThreadBudget, ARegionGetsTheThreadsItsWorkIsWorthAndGivesThemBack) {
    const int before = threadCountOfCallingThread();
    applyThreadCountToCallingThread(8);
    if (threadCountOfCallingThread() != 8) GTEST_SKIP() << "a build without OpenMP has one thread";
    {
        const ThreadBudget budget(flopsPerThread() * 3.0);
        EXPECT_EQ(threadCountOfCallingThread(), 1);
        {
            const ThreadBudget inner(flopsPerThread() * 100.0);  // never more than it had
            EXPECT_EQ(threadCountOfCallingThread(), 1);
        }
        EXPECT_EQ(threadCountOfCallingThread(), 1);
    }
    EXPECT_EQ(threadCountOfCallingThread(), 8);
    {
        const ThreadBudget budget(flopsPerThread() * 4.0);
        EXPECT_EQ(threadCountOfCallingThread(), 8);
    }
    EXPECT_EQ(threadCountOfCallingThread(), 8);
    {
        const ThreadBudget budget(1.0);
        EXPECT_EQ(threadCountOfCallingThread(), 1);
    }
    EXPECT_EQ(threadCountOfCallingThread(), 8);
    applyThreadCountToCallingThread(before);
}

// The pool's loops need a fifth of a primitive's share per thread of the team; each thread gets
// one contiguous range, and the ranges cover [0, n) once.
TEST(ThreadBudget, PoolLoopsSplitOverTheThreadsTheirWorkIsWorth) {
    ThreadPool pool(8);
    auto ranges = [&](std::int64_t n, double costPerItem) {
        std::mutex mutex;
        std::set<std::pair<std::int64_t, std::int64_t>> seen;
        std::atomic<std::int64_t> covered{0};
        pool.parallelFor(n, costPerItem, [&](std::int64_t begin, std::int64_t end) {
            covered += end - begin;
            const std::lock_guard lock(mutex);
            seen.emplace(begin, end);
        });
        EXPECT_EQ(covered.load(), n);
        return seen.size();
    };
    const double loopShare = flopsPerThread() / 5.0;
    EXPECT_EQ(ranges(1000, loopShare * 1.5 / 1000.0), 1u);  // below two shares: inline
    EXPECT_EQ(ranges(1, loopShare * 100.0), 1u);
    const int before = threadCountOfCallingThread();
    applyThreadCountToCallingThread(8);
    const bool openMp = threadCountOfCallingThread() == 8;
    applyThreadCountToCallingThread(before);
    if (!openMp) GTEST_SKIP() << "the Eigen pool chooses its own blocks";
    EXPECT_EQ(ranges(1000, loopShare * 3.9 / 1000.0), 1u);  // the whole team or one thread
    EXPECT_EQ(ranges(1000, loopShare * 4.01 / 1000.0), 8u);
    EXPECT_EQ(ranges(1000, loopShare * 100.0 / 1000.0), 8u);
    EXPECT_EQ(ranges(5, loopShare * 100.0), 5u);  // never more ranges than items
}

}  // namespace
}  // namespace onnxlens::engine
