// onnxlens-cli bench MODEL: latency statistics as onnxruntime_perf_test reports them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "CliSession.h"
#include "onnxlens/engine/TensorByteLimit.h"
#include "onnxlens/model/CostModel.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/Roofline.h"
#include "onnxlens/workflows/ShapeSweep.h"

namespace onnxlens::cli {

namespace {

// --sweep SYMBOL=V1,V2,...: the axes in the order given.
std::vector<engine::SweepAxis> sweepAxes(const Arguments& a) {
    std::vector<engine::SweepAxis> axes;
    for (const auto& text : a.values("sweep")) {
        splitAssignment(text, "sweep");  // the usual message for a missing '='
        auto axis = engine::parseSweepAxis(text);
        if (!axis) throw UsageError("option --" + axis.error().message);
        axes.push_back(std::move(*axis));
    }
    return axes;
}

// `bench --sweep`: one session, one benchmark per combination of dims.
int runSweep(const Arguments& a, const LoadedSession& loaded, int warmup, int runs) {
    engine::Session& session = *loaded.session;
    engine::ValueRanges ranges = loaded.indexRanges;
    for (const auto& [name, range] : parseIntegerRanges(a)) ranges[name] = range;
    const auto axes = sweepAxes(a);
    if (const auto unknown = engine::unknownSweepSymbol(session.inputs(), axes); !unknown.empty())
        throw UsageError(a.positionals()[0] + ": --sweep " + unknown);
    std::map<std::string, std::filesystem::path> files;
    for (const auto& text : a.values("input")) {
        auto [name, file] = splitAssignment(text, "input");
        files[name] = file;
    }
    const auto fixed = parseDims(a);
    const bool json = a.flag("json");
    if (!json)
        std::printf("%-32s %10s %10s %10s %14s\n", "dims", "median ms", "p90 ms", "min ms",
                    "items/s");
    engine::SweepRunner sweep(session, warmup, runs);
    if (!json)
        sweep.setPointCallback([](const engine::SweepPoint& point) {
            const std::string label = engine::sweepLabel(point.dims);
            if (!point.ok())
                std::printf("%-32s rejected: %s\n", label.c_str(), point.error.c_str());
            else
                std::printf("%-32s %10.3f %10.3f %10.3f %14.1f\n", label.c_str(),
                            point.statistics.medianMs, point.statistics.p90Ms,
                            point.statistics.minMs, point.itemsPerSecond);
        });
    auto points =
        sweep.run(engine::sweepCombinations(axes), [&](const engine::SymbolBindings& combo) {
            auto dims = fixed;
            for (const auto& [k, v] : combo) dims[k] = v;
            const engine::ScopedTensorByteLimit limit(parseMaxMemory(a));
            return engine::prepareFeeds(session.inputs(), files, dims,
                                        static_cast<std::uint64_t>(a.intValue("seed", 0)), ranges);
        });
    if (!points) throw UsageError(a.positionals()[0] + ": " + points.error().message);
    if (json) {
        auto rows = nlohmann::json::array();
        for (const auto& point : *points) {
            nlohmann::json row{{"dims", point.dims}};
            if (!point.ok()) {
                row["error"] = point.error;
            } else {
                const auto& st = point.statistics;
                row["median_ms"] = st.medianMs;
                row["p90_ms"] = st.p90Ms;
                row["min_ms"] = st.minMs;
                row["mean_ms"] = st.meanMs;
                row["items_per_second"] = point.itemsPerSecond;
            }
            rows.push_back(row);
        }
        printJson({{"model", a.positionals()[0]},
                   {"threads", session.threads()},
                   {"warmup", warmup},
                   {"runs", runs},
                   {"sweep", rows}});
    }
    return kExitOk;
}

int runBench(const Arguments& a) {
    const int warmup = static_cast<int>(a.intValue("warmup", 5));
    const int runs = static_cast<int>(a.intValue("runs", 50));
    if (warmup < 0 || runs < 1) throw UsageError("--warmup must be >= 0 and --runs >= 1");

    const auto loadStart = std::chrono::steady_clock::now();
    auto loaded =
        loadSession(a.positionals()[0], static_cast<int>(a.intValue("threads", 0)),
                    !a.flag("no-optimize"), parseMaxMemory(a), a.flag("allow-newer-opset"));
    const double loadMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loadStart)
            .count();
    if (!a.values("sweep").empty()) {
        if (a.value("profile")) throw UsageError("--sweep and --profile exclude each other");
        return runSweep(a, loaded, warmup, runs);
    }
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
    // Achieved GFLOP/s per node: the cost model's FLOPs at the dims of the inputs that ran (input
    // files and --dim alike; --dim alone left a sequence read from a file counted as 1, 128x too
    // few FLOPs on BERT) over the measured time, and the share of the peak of the build's own
    // GEMM at the same thread count.
    std::vector<engine::NodeRate> rates;
    engine::PeakThroughput peak;
    if (profiling) {
        auto cost = computeModelCost(*loaded.model.proto, {result.dims.begin(), result.dims.end()});
        if (auto measured = engine::measurePeakThroughput(loaded.session->threads()))
            peak = *measured;
        if (cost) rates = engine::nodeRates(*cost, result.nodes, peak.gflops);
        engine::coverAchievedRates(peak, rates);
    }

    if (a.flag("json")) {
        nlohmann::json doc = engine::benchmarkToJson(result);
        if (profiling) {
            doc["profile"] = *a.value("profile");
            doc["peak_gflops"] = peak.gflops;
            doc["peak_method"] = peak.method;
            std::map<std::string, const engine::NodeRate*> byName;
            for (const auto& r : rates) byName.emplace(r.nodeName, &r);
            if (doc.contains("nodes"))
                for (auto& node : doc["nodes"]) {
                    auto it = byName.find(node.value("name", std::string()));
                    if (it == byName.end()) continue;
                    node["flops"] = it->second->flops;
                    node["gflops"] = it->second->gflops;
                    node["arithmetic_intensity"] = it->second->intensity;
                    node["peak_share"] = it->second->peakShare;
                }
        }
        printJson(doc);
        return kExitOk;
    }
    std::printf("%s: %d runs after %d warm-up, %d threads, load %.1f ms\n",
                a.positionals()[0].c_str(), stats.runs, warmup, loaded.session->threads(), loadMs);
    if (const std::string note = engine::reducedThreadsNote(result); !note.empty())
        std::printf("  fewer threads ran: %s\n", note.c_str());
    std::printf(
        "  min %.3f ms  mean %.3f ms  median %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms  "
        "stddev %.3f ms\n",
        stats.minMs, stats.meanMs, stats.medianMs, stats.p90Ms, stats.p99Ms, stats.maxMs,
        stats.stddevMs);
    if (profiling) {
        std::printf("  per op type (per run):\n");
        for (const auto& op : result.opTypes)
            std::printf("    %-28s %9.3f ms  %5.1f%%  (%d calls)\n", op.opType.c_str(),
                        op.totalMs / stats.runs, 100.0 * op.share, op.calls / stats.runs);
        std::printf("  peak %.1f GFLOP/s (%s)\n", peak.gflops, peak.method.c_str());
        std::printf("  heaviest nodes (achieved GFLOP/s, share of peak):\n");
        auto top = rates;
        std::sort(top.begin(), top.end(),
                  [](const auto& x, const auto& y) { return x.perRunMs > y.perRunMs; });
        for (std::size_t i = 0; i < std::min<std::size_t>(top.size(), 10); ++i)
            std::printf("    %-40s %-14s %9.3f ms %8.1f GFLOP/s %5.1f%%\n", top[i].nodeName.c_str(),
                        top[i].opType.c_str(), top[i].perRunMs, top[i].gflops,
                        100.0 * top[i].peakShare);
        std::printf("  profile written to %s (Chrome trace JSON)\n", a.value("profile")->c_str());
    }
    return kExitOk;
}

}  // namespace

Command addBenchCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "bench",
                   "latency statistics of the engine on the model (min, mean, median, p90, p99)");
    addPositional(*command, "MODEL", "the ONNX model file");
    addValueOption(*command, "warmup", "N", "untimed runs first (default 5)");
    addValueOption(*command, "runs", "N", "timed runs (default 50)");
    addSessionOptions(*command);
    addFeedOptions(*command);
    addValueOption(*command, "profile", "FILE",
                   "time every node, print the heaviest and write a Chrome trace to FILE");
    addRepeatedOption(*command, "sweep", "SYMBOL=V1,V2,...",
                      "benchmark every combination of these values of symbolic dims");
    addJsonFlag(*command, "print one JSON document instead of the report");
    return {command, runBench};
}

}  // namespace onnxlens::cli
