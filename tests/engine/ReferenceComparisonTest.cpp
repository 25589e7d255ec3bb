#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/ReferenceComparison.h"

using namespace onnxlens::engine;

TEST(ReferenceComparison, ToleranceFormula) {
    // |a - e| <= atol + rtol * |e|: with e = 100, rtol 1e-3 allows 0.1 + 1e-5.
    auto e = Tensor::fromVector<float>({2}, {100.0f, 1.0f});
    auto ok = Tensor::fromVector<float>({2}, {100.09f, 1.0005f});
    auto bad = Tensor::fromVector<float>({2}, {100.2f, 1.0f});
    EXPECT_TRUE(compareTensors(ok, e).passed);
    auto r = compareTensors(bad, e);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.outsideCount, 1);
    EXPECT_NEAR(r.maxAbsError, 0.2, 1e-4);
    EXPECT_NEAR(r.fractionOutside, 0.5, 1e-12);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{0}));
}

TEST(ReferenceComparison, NaNEqualsNaNAndInfMustMatch) {
    const float nan = std::nanf("");
    const float inf = INFINITY;
    auto e = Tensor::fromVector<float>({3}, {nan, inf, 1});
    EXPECT_TRUE(compareTensors(Tensor::fromVector<float>({3}, {nan, inf, 1}), e).passed);
    EXPECT_FALSE(compareTensors(Tensor::fromVector<float>({3}, {1, inf, 1}), e).passed);
    EXPECT_FALSE(compareTensors(Tensor::fromVector<float>({3}, {nan, -inf, 1}), e).passed);
}

TEST(ReferenceComparison, IntegersAreExact) {
    auto e = Tensor::fromVector<std::int64_t>({2}, {1000000, 5});
    EXPECT_FALSE(compareTensors(Tensor::fromVector<std::int64_t>({2}, {1000001, 5}), e).passed);
}

TEST(ReferenceComparison, DtypeAndShapeMismatch) {
    auto e = Tensor::fromVector<float>({2}, {1, 2});
    auto r = compareTensors(Tensor::fromVector<double>({2}, {1, 2}), e);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.problem.find("float64"), std::string::npos);
    r = compareTensors(Tensor::fromVector<float>({1, 2}, {1, 2}), e);
    EXPECT_NE(r.problem.find("[1x2]"), std::string::npos);
}

TEST(ReferenceComparison, WorstIndexIsMultiDimensional) {
    auto e = Tensor::fromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0});
    auto a = Tensor::fromVector<float>({2, 3}, {0, 0, 0, 0, 0.5f, 0});
    auto r = compareTensors(a, e);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{1, 1}));
    EXPECT_NEAR(r.meanAbsError, 0.5 / 6, 1e-9);
}

TEST(ReferenceComparison, Strings) {
    Tensor a(DataType::String, {1}), e(DataType::String, {1});
    a.data<std::string>()[0] = "x";
    e.data<std::string>()[0] = "y";
    EXPECT_FALSE(compareTensors(a, e).passed);
}

TEST(LatencyStatistics, Percentiles) {
    std::vector<double> samples;
    for (int i = 1; i <= 101; ++i) samples.push_back(i);
    auto s = computeLatencyStatistics(samples);
    EXPECT_EQ(s.runs, 101);
    EXPECT_DOUBLE_EQ(s.minMs, 1);
    EXPECT_DOUBLE_EQ(s.maxMs, 101);
    EXPECT_DOUBLE_EQ(s.medianMs, 51);
    EXPECT_DOUBLE_EQ(s.p90Ms, 91);
    EXPECT_DOUBLE_EQ(s.p99Ms, 100);
    EXPECT_DOUBLE_EQ(s.meanMs, 51);
}

TEST(LatencyStatistics, OpTypeShares) {
    std::vector<std::vector<NodeProfile>> runs = {
        {{"a", "Conv", 0, 3000000}, {"b", "Relu", 3000000, 1000000}}};
    auto byType = summarizeByOpType(runs);
    ASSERT_EQ(byType.size(), 2u);
    EXPECT_EQ(byType[0].opType, "Conv");
    EXPECT_NEAR(byType[0].share, 0.75, 1e-12);
}

TEST(ReferenceComparison, CosineAndUninformativeReferences) {
    const Tolerance tolerance{1e-3, 1e-4};
    // Orthogonal vectors: cosine 0, computed by hand.
    auto r = compareTensors(Tensor::fromVector<float>({2}, {1, 0}),
                            Tensor::fromVector<float>({2}, {0, 1}), tolerance);
    EXPECT_NEAR(r.cosineSimilarity, 0.0, 1e-12);
    // a = 2e: cosine 1 although every element is off by 100%.
    r = compareTensors(Tensor::fromVector<float>({3}, {2, 4, 6}),
                       Tensor::fromVector<float>({3}, {1, 2, 3}), tolerance);
    EXPECT_NEAR(r.cosineSimilarity, 1.0, 1e-9);
    EXPECT_NEAR(r.maxRelError, 1.0, 1e-9);
    EXPECT_EQ(uninformativeReferenceWarning(r, tolerance), "");

    // Outputs of ~3e-9 (a MobileNetV2 export with random weights): all zeros pass too.
    auto tiny = Tensor::fromVector<float>({3}, {3e-9f, -2e-9f, 1e-9f});
    auto zeros = Tensor::fromVector<float>({3}, {0, 0, 0});
    r = compareTensors(zeros, tiny, tolerance);
    EXPECT_TRUE(r.passed);
    const std::string warning = uninformativeReferenceWarning(r, tolerance);
    EXPECT_EQ(warning.rfind("outputs are ~3e-09", 0), 0u) << warning;
    EXPECT_NE(warning.find("the check cannot tell right from wrong; use real weights or inputs"),
              std::string::npos);
    EXPECT_NEAR(r.referenceMaxAbs, 3e-9, 1e-15);
    EXPECT_EQ(r.cosineSimilarity, 0.0);  // only one side is all zeros

    // Constant outputs.
    auto half = Tensor::fromVector<float>({4}, {0.5f, 0.5f, 0.5f, 0.5f});
    r = compareTensors(half, half, tolerance);
    EXPECT_NE(uninformativeReferenceWarning(r, tolerance).find("outputs are constant"),
              std::string::npos);
    // Integers are compared exactly: no warning.
    auto ints = Tensor::fromVector<std::int64_t>({2}, {0, 0});
    EXPECT_EQ(uninformativeReferenceWarning(compareTensors(ints, ints, tolerance), tolerance), "");

    r = compareTensors(Tensor::fromVector<float>({2}, {1.0f, 2.0f}),
                       Tensor::fromVector<float>({2}, {1.0f, 2.0f}), tolerance);
    EXPECT_EQ(describeAgreement(r, tolerance),
              "max abs error 0, max rel error 0, cosine similarity 1.000000, 0 of 2 outside "
              "|a - e| <= 1e-04 + 1e-03 * |e|");
}

TEST(LatencyComparison, RatioWithinNoiseAndBusyFromSamples) {
    // Medians 10 and 11, P10-P90 spreads 9..11 and 10..12 overlap by 1 = the difference: not
    // within noise; 9..12 and 10..13 overlap by 2 > 1: within noise.
    const auto stats = [](std::vector<double> v) { return computeLatencyStatistics(std::move(v)); };
    auto a = stats({9, 9, 10, 11, 11});
    auto b = stats({10, 10, 11, 12, 12});
    EXPECT_DOUBLE_EQ(a.p10Ms, 9);
    EXPECT_DOUBLE_EQ(a.p90Ms, 11);
    auto c = compareLatencies(a, b, true);
    EXPECT_NEAR(c.ratio, 10.0 / 11.0, 1e-12);
    EXPECT_FALSE(c.withinNoise);
    EXPECT_FALSE(c.busy);
    c = compareLatencies(stats({9, 9, 10, 12, 12}), stats({10, 10, 11, 13, 13}), true);
    EXPECT_TRUE(c.withinNoise);
    EXPECT_EQ(c.note.rfind("within noise", 0), 0u) << c.note;

    // PyTorch's runs from 16 ms to 167 ms (the figures): CV far above 20%.
    c = compareLatencies(stats({10, 10.2, 10.1, 9.9, 10}), stats({16, 17, 16, 167, 18}), false,
                         "the engine", "PyTorch");
    EXPECT_TRUE(c.busy);
    EXPECT_EQ(c.note.rfind("the machine was busy: rerun (PyTorch's runs vary", 0), 0u) << c.note;
}

TEST(LatencyComparison, InterleavedRunsAlternateAndABusyThreadIsFlagged) {
    std::vector<char> order;
    auto timed = timeInterleaved(
        [&]() -> onnxlens::Result<double> {
            order.push_back('A');
            return 1.0;
        },
        [&]() -> onnxlens::Result<double> {
            order.push_back('B');
            return 2.0;
        },
        1, 3);
    ASSERT_TRUE(timed);
    EXPECT_EQ(std::string(order.begin(), order.end()), "ABABABAB");
    EXPECT_TRUE(timed->interleaved);
    EXPECT_EQ(timed->a.runs, 3);
    EXPECT_DOUBLE_EQ(timed->ratio, 0.5);
    EXPECT_FALSE(timed->busy);

    // A loaded machine: every other run of side B has to wait for a busy thread's 3 ms burst
    // of work (the CPU taken by another process), so B's runs alternate between ~3 ms and ~0 ms;
    // the comparison must say "rerun", not give a ratio verdict. The bursts are requested by B
    // itself, so the schedule does not depend on how the threads happen to be scheduled.
    std::mutex m;
    std::condition_variable changed;
    int requested = 0, done = 0;
    bool stop = false;
    std::thread busy([&] {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            changed.wait(lock, [&] { return stop || requested > done; });
            if (stop) return;
            lock.unlock();
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3);
            while (std::chrono::steady_clock::now() < until) {
            }
            lock.lock();
            ++done;
            changed.notify_all();
        }
    });
    int bRuns = 0;
    const auto work = [&](bool loaded) -> onnxlens::Result<double> {
        const auto start = std::chrono::steady_clock::now();
        if (loaded && bRuns++ % 2 == 0) {
            std::unique_lock<std::mutex> lock(m);
            ++requested;
            changed.notify_all();
            changed.wait(lock, [&] { return done == requested; });
        }
        volatile double x = 0;
        for (int i = 0; i < 20000; ++i) x = x + std::sqrt(static_cast<double>(i));
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    };
    timed = timeInterleaved([&] { return work(false); }, [&] { return work(true); }, 2, 30, {},
                            "the engine", "PyTorch");
    {
        std::lock_guard<std::mutex> lock(m);
        stop = true;
    }
    changed.notify_all();
    busy.join();
    ASSERT_TRUE(timed);
    EXPECT_TRUE(timed->busy) << "PyTorch CV " << timed->b.coefficientOfVariation();
    EXPECT_NE(timed->note.find("the machine was busy: rerun"), std::string::npos) << timed->note;
}
