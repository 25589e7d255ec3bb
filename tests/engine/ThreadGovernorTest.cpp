// Fewer threads while other programs keep the cores busy: the governor's decisions on a simulated
// clock and simulated waits, the kernel's wait counts, and a session whose runs change thread
// count between runs (oneDNN primitives made for each count) giving the same results.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <random>

#include "../../engine/src/ThreadGovernor.h"
#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/EngineWorkerProtocol.h"

namespace onnxlens::engine {
namespace {

using namespace onnxlens::testing;

constexpr std::int64_t kMs = 1'000'000;

// A machine on a simulated clock: each run takes `runNs`; in a run on more than one thread, thread
// 2 (the worker beside a busy program) waited `waitShare` of its time for a CPU.
struct SimulatedMachine {
    std::int64_t now = 0;
    std::int64_t runNs = 5 * kMs;
    double waitShare = 0.0;
    std::map<int, std::int64_t> waited{{1, 0}, {2, 0}};
    int readings = 0;

    ThreadGovernor governor(int requested, bool adapt = true) {
        return ThreadGovernor(
            requested, adapt,
            [this](ThreadWaitTimes& out) {
                ++readings;
                out.clear();
                for (const auto& [tid, ns] : waited) out.push_back({tid, ns});
                return true;
            },
            [this] { return now; });
    }
    // One run through the governor; returns the threads it used.
    int run(ThreadGovernor& g) {
        const int threads = g.beginRun();
        now += runNs;
        if (threads > 1)
            waited[2] += static_cast<std::int64_t>(waitShare * static_cast<double>(runNs));
        g.endRun();
        return threads;
    }
};

TEST(ThreadGovernor, AnIdleMachineKeepsEveryThread) {
    SimulatedMachine machine;
    machine.waitShare = 0.03;  // what an idle machine's runs wait (docs/performance.md)
    ThreadGovernor g = machine.governor(8);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(machine.run(g), 8);
    EXPECT_GT(machine.readings, 40);  // one reading per 20 ms window
    EXPECT_EQ(g.use().runs, 200);
    EXPECT_EQ(g.use().reducedRuns, 0);
    EXPECT_EQ(g.use().fewest, 8);
}

TEST(ThreadGovernor, HalvesWhileAThreadWaitsAndTriesTwiceAsManyLater) {
    SimulatedMachine machine;
    machine.waitShare = 0.6;  // a thread sharing its core with a busy program
    ThreadGovernor g = machine.governor(8);
    // The first window (20 ms: four runs) ran on 8; each contended window halves, down to one.
    std::vector<int> used;
    for (int i = 0; i < 12; ++i) used.push_back(machine.run(g));
    EXPECT_EQ(used, (std::vector<int>{8, 8, 8, 8, 4, 4, 4, 4, 2, 2, 2, 2}));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(machine.run(g), 1);
    // The busy program stays: one window tries 2 after 100 ms, goes back to 1, and the next
    // try comes twice as late.
    const std::int64_t reducedAt = machine.now;
    std::vector<std::int64_t> tries;  // when each try at 2 threads began
    bool trying = false;
    for (int i = 0; i < 400 && tries.size() < 3; ++i) {
        const std::int64_t at = machine.now;
        const bool more = machine.run(g) > 1;
        if (more && !trying) tries.push_back(at);
        trying = more;
    }
    ASSERT_EQ(tries.size(), 3u);
    EXPECT_GE(tries[0] - reducedAt, 100 * kMs - 20 * kMs);
    EXPECT_LE(tries[0] - reducedAt, 100 * kMs + 20 * kMs);
    EXPECT_GE(tries[1] - tries[0], 200 * kMs);
    EXPECT_GE(tries[2] - tries[1], 400 * kMs);
    // It goes: the next try keeps 2, and the one after it 4, and so on up to the 8 asked for.
    machine.waitShare = 0.0;
    int last = 1;
    for (int i = 0; i < 2000 && last < 8; ++i) last = machine.run(g);
    EXPECT_EQ(last, 8);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(machine.run(g), 8);
    const ThreadUse use = g.use();
    EXPECT_EQ(use.requested, 8);
    EXPECT_EQ(use.fewest, 1);
    EXPECT_GT(use.reducedRuns, 0);
    EXPECT_LT(use.reducedRuns, use.runs);
}

TEST(ThreadGovernor, OffOneThreadOrNoReadingsKeepTheRequestedCount) {
    SimulatedMachine machine;
    machine.waitShare = 0.9;
    ThreadGovernor off = machine.governor(4, false);
    ThreadGovernor one = machine.governor(1);
    ThreadGovernor unread(
        4, true, [](ThreadWaitTimes&) { return false; }, [&machine] { return machine.now; });
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(machine.run(off), 4);
        EXPECT_EQ(machine.run(one), 1);
        EXPECT_EQ(machine.run(unread), 4);
    }
    EXPECT_EQ(machine.readings, 0);
    EXPECT_EQ(off.use().reducedRuns, 0);
}

TEST(ThreadGovernor, APauseBetweenRunsStartsANewWindow) {
    SimulatedMachine machine;
    ThreadGovernor g = machine.governor(2);
    machine.run(g);  // 5 ms of a window
    // Waits while the session sat unused (another program ran) are not this session's runs'.
    machine.waited[2] += 400 * kMs;
    machine.now += ThreadGovernor::kStaleGapNs + kMs;
    for (int i = 0; i < 20; ++i) EXPECT_EQ(machine.run(g), 2);
}

TEST(ThreadWaitTimes, ReadsEveryThreadOfThisProcessWithoutAllocating) {
    ThreadWaitTimes waits;
    waits.reserve(64);
    const ThreadWait* storage = waits.data();
    if (!readThreadWaitTimes(waits)) GTEST_SKIP() << "the kernel reports no schedstat here";
    EXPECT_EQ(waits.data(), storage);  // filled in the reserved buffer
    EXPECT_EQ(waits.capacity(), 64u);
    const int self = static_cast<int>(::syscall(SYS_gettid));
    bool found = false;
    for (std::size_t i = 0; i < waits.size(); ++i) {
        found = found || waits[i].tid == self;
        EXPECT_GE(waits[i].waitedNs, 0);
        if (i > 0) EXPECT_LT(waits[i - 1].tid, waits[i].tid);
    }
    EXPECT_TRUE(found);
    // At most the capacity's threads are read.
    ThreadWaitTimes one;
    one.reserve(1);
    ASSERT_TRUE(readThreadWaitTimes(one));
    EXPECT_EQ(one.size(), 1u);
}

// A session at 2 threads whose threads "wait" (the reader says so) goes to 1 thread between runs
// and gives what a 1-thread session gives: the oneDNN convolution's and product's primitives are
// made again for the new count (oneDNN fixes a primitive's threads when it is made). When the
// waits stop, it goes back to 2.
// A convolution and a product large enough for oneDNN on both threads, and its feeds.
struct ParallelModel {
    onnx::ModelProto model = emptyModel();
    std::map<std::string, Value> feeds;
    ParallelModel() {
        auto& g = *model.mutable_graph();
        addFloatInput(g, "x", {1, 32, 48, 48});
        addFloatInput(g, "a", {384, 384});
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        auto randomTensor = [&](Shape shape) {
            Tensor t(DataType::Float, std::move(shape));
            for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
            return t;
        };
        addInitializer(g, "w", randomTensor({64, 32, 3, 3}));
        addInitializer(g, "b", randomTensor({384, 384}));
        auto* conv = addNode(g, "Conv", {"x", "w"}, {"y"});
        setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
        addNode(g, "MatMul", {"a", "b"}, {"z"});
        g.add_output()->set_name("y");
        g.add_output()->set_name("z");
        feeds = {{"x", Value(randomTensor({1, 32, 48, 48}))},
                 {"a", Value(randomTensor({384, 384}))}};
    }
    // A 2-thread session whose reader reports a long wait in every window while `busy`.
    std::unique_ptr<Session> governed(const bool& busy) const {
        LoadedModel loaded;
        loaded.path = "governed.onnx";
        loaded.proto = std::make_shared<onnx::ModelProto>(model);
        SessionOptions options;
        options.optimize = false;
        options.threads = 2;
        auto waited = std::make_shared<std::int64_t>(0);
        options.threadWaitReader = [&busy, waited](ThreadWaitTimes& out) {
            if (busy) *waited += 1000 * kMs;  // far over a fifth of any window
            out.clear();
            out.push_back({1, *waited});
            return true;
        };
        auto created = Session::create(loaded, options);
        EXPECT_TRUE(created) << (created ? "" : created.error().message);
        return created ? std::move(*created) : nullptr;
    }
};

TEST(ThreadGovernor, ASessionRunsOnFewerThreadsWhileItsThreadsWaitWithTheSameResults) {
    const ParallelModel parallel;
    const auto& feeds = parallel.feeds;
    auto reference = compileForTest(parallel.model, false, 1);
    ASSERT_TRUE(reference);
    auto expected = reference->run(feeds);
    ASSERT_TRUE(expected) << expected.error().message;

    bool busy = true;
    auto governed = parallel.governed(busy);
    ASSERT_TRUE(governed);
    Session& session = *governed;
    EXPECT_EQ(session.threads(), 2);

    auto runAndCompare = [&] {
        auto outputs = session.run(feeds);
        ASSERT_TRUE(outputs) << outputs.error().message;
        for (std::size_t i = 0; i < 2; ++i)
            EXPECT_TRUE(
                tensorsClose((*outputs)[i].tensor(), (*expected)[i].tensor(), {1e-4, 1e-5}));
    };
    runAndCompare();  // at 2 threads
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::steady_clock::now() - start; };
    while (session.threadUse().reducedRuns == 0 && elapsed() < std::chrono::seconds(60))
        runAndCompare();
    ASSERT_GT(session.threadUse().reducedRuns, 0);
    EXPECT_EQ(session.threadUse().fewest, 1);
    runAndCompare();  // at 1 thread
    busy = false;
    std::int64_t reduced = session.threadUse().reducedRuns;
    // A try at 2 threads comes within 100 ms of run time and keeps them.
    for (int fullRuns = 0; fullRuns < 3 && elapsed() < std::chrono::seconds(120);) {
        runAndCompare();
        const std::int64_t now = session.threadUse().reducedRuns;
        fullRuns = now == reduced ? fullRuns + 1 : 0;
        reduced = now;
    }
    const std::int64_t before = session.threadUse().reducedRuns;
    runAndCompare();
    EXPECT_EQ(session.threadUse().reducedRuns, before);
    EXPECT_EQ(session.threadUse().requested, 2);
}

// What a benchmark reports when fewer threads ran, in its JSON, its Markdown, and through the
// engine worker's protocol to the window.
TEST(ThreadGovernor, ABenchmarkSaysHowManyOfItsRunsUsedFewerThreads) {
    const ParallelModel parallel;
    bool busy = true;
    auto session = parallel.governed(busy);
    ASSERT_TRUE(session);
    // Runs until the governor has gone to one thread (a 20 ms window of runs), then a benchmark
    // of 3 counted runs: those before its next try at 2 threads (100 ms later) are reduced.
    const auto start = std::chrono::steady_clock::now();
    while (session->threadUse().reducedRuns == 0 &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
        ASSERT_TRUE(session->run(parallel.feeds));
    BenchmarkRunner runner(*session, {0, 3, false});
    auto result = runner.run(parallel.feeds);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->threads, 2);
    const int reduced = result->reducedRuns;
    ASSERT_GE(reduced, 1);
    EXPECT_EQ(result->fewestThreads, 1);
    EXPECT_EQ(reducedThreadsNote(*result), "1 thread in " + std::to_string(reduced) +
                                               " of 3 runs: other programs kept the cores busy");
    const auto doc = benchmarkToJson(*result);
    EXPECT_EQ(doc["threads"], 2);
    EXPECT_EQ(doc["threads_reduced_runs"], reduced);
    EXPECT_EQ(doc["fewest_threads"], 1);
    EXPECT_NE(benchmarkToMarkdown(*result).find("Fewer threads ran: 1 thread in"),
              std::string::npos);
    auto back = benchmarkFromMeasurementsJson(benchmarkMeasurementsToJson(*result));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->reducedRuns, reduced);
    EXPECT_EQ(back->fewestThreads, 1);

    // An idle machine: nothing to say.
    busy = false;
    auto idle = parallel.governed(busy);
    ASSERT_TRUE(idle);
    BenchmarkRunner idleRunner(*idle, {1, 3, false});
    auto quiet = idleRunner.run(parallel.feeds);
    ASSERT_TRUE(quiet) << quiet.error().message;
    EXPECT_EQ(quiet->reducedRuns, 0);
    EXPECT_EQ(quiet->fewestThreads, 2);
    EXPECT_EQ(reducedThreadsNote(*quiet), "");
}

}  // namespace
}  // namespace onnxlens::engine
