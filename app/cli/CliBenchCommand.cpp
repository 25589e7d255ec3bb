// onnxlens-cli bench MODEL: latency statistics as onnxruntime_perf_test reports them.
#include <chrono>
#include <cstdio>

#include "CliSession.h"
#include "onnxlens/workflows/BenchmarkRunner.h"

namespace onnxlens::cli {

int runBenchCommand(const std::vector<std::string>& args) {
    Arguments a(
        args,
        {"warmup", "runs", "threads", "dim", "profile", "seed", "input", "max-memory", "int-range"},
        {"json", "no-optimize"});
    a.requirePositionals(1,
                         "onnxlens-cli bench MODEL [--warmup N] [--runs N] [--threads N] [--dim "
                         "S=N|INPUT:AXIS=N]... "
                         "[--input NAME=FILE]... [--int-range NAME=LO,HI]... [--profile FILE] "
                         "[--max-memory BYTES|NG] [--json]");
    const int warmup = static_cast<int>(a.intValue("warmup", 5));
    const int runs = static_cast<int>(a.intValue("runs", 50));
    if (warmup < 0 || runs < 1) throw UsageError("--warmup must be >= 0 and --runs >= 1");

    const auto loadStart = std::chrono::steady_clock::now();
    auto loaded = loadSession(a.positionals()[0], static_cast<int>(a.intValue("threads", 0)), !a.flag("no-optimize"),
                              parseMaxMemory(a));
    const double loadMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loadStart).count();
    auto feeds = prepareFeedsFromArguments(loaded, a);

    engine::BenchmarkRunner runner(*loaded.session, {warmup, runs, a.value("profile").has_value()});
    auto benchmark = runner.run(feeds);
    if (!benchmark) throw UsageError(a.positionals()[0] + ": " + benchmark.error().message);
    engine::BenchmarkResult& result = benchmark.value();
    result.model = a.positionals()[0];
    result.loadMs = loadMs;
    const auto& stats = result.statistics;
    const bool profiling = result.profiled;
    if (profiling)
        if (auto st = engine::writeChromeTrace(*a.value("profile"), result.runProfiles); !st)
            throw UsageError(st.error().message);

    if (a.flag("json")) {
        nlohmann::json doc = engine::benchmarkToJson(result);
        if (profiling) doc["profile"] = *a.value("profile");
        printJson(doc);
        return kExitOk;
    }
    std::printf("%s: %d runs after %d warm-up, %d threads, load %.1f ms\n", a.positionals()[0].c_str(), stats.runs,
                warmup, loaded.session->threads(), loadMs);
    std::printf("  min %.3f ms  mean %.3f ms  median %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms  stddev %.3f ms\n",
                stats.minMs, stats.meanMs, stats.medianMs, stats.p90Ms, stats.p99Ms, stats.maxMs, stats.stddevMs);
    if (profiling) {
        std::printf("  per op type (per run):\n");
        for (const auto& op : result.opTypes)
            std::printf("    %-28s %9.3f ms  %5.1f%%  (%d calls)\n", op.opType.c_str(), op.totalMs / stats.runs,
                        100.0 * op.share, op.calls / stats.runs);
        std::printf("  profile written to %s (Chrome trace JSON)\n", a.value("profile")->c_str());
    }
    return kExitOk;
}

}  // namespace onnxlens::cli
