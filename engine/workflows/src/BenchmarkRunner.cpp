#include "onnxlens/workflows/BenchmarkRunner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::engine {

double BenchmarkResult::nodeTimePerRunMs() const {
    if (runProfiles.empty()) return 0;
    double total = 0;
    for (const auto& node : nodes) total += node.totalMs;
    return total / static_cast<double>(runProfiles.size());
}

BenchmarkRunner::BenchmarkRunner(Session& session, BenchmarkOptions options)
    : session_(session), options_(options) {}

Result<BenchmarkResult> BenchmarkRunner::run(const std::map<std::string, Value>& feeds) {
    if (options_.warmupRuns < 0 || options_.runs < 1)
        return Error{"a benchmark needs warm-up runs >= 0 and runs >= 1"};
    BenchmarkResult result;
    result.threads = session_.threads();
    result.warmupRuns = options_.warmupRuns;
    result.profiled = options_.profile;
    result.dims = bindingsOfFeeds(session_.inputs(), feeds);
    result.samplesMs.reserve(static_cast<std::size_t>(options_.runs));
    const Error cancelled{"benchmark cancelled"};

    auto runOnce = [&](bool profile, double& ms) -> Status {
        if (isCancelled()) return cancelled;
        control_.profile = profile;
        const auto start = std::chrono::steady_clock::now();
        auto outputs = session_.run(feeds, &control_);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                 .count();
        if (isCancelled()) return cancelled;
        if (!outputs) return outputs.error();
        return Ok{};
    };

    for (int i = 0; i < options_.warmupRuns; ++i) {
        double ms = 0;
        if (auto st = runOnce(false, ms); !st) return st.error();
        if (i == 0) result.firstRunMs = ms;
        if (progress_) progress_({true, i + 1, options_.warmupRuns, ms});
    }
    const ThreadUse before = session_.threadUse();
    for (int i = 0; i < options_.runs; ++i) {
        double ms = 0;
        if (auto st = runOnce(options_.profile, ms); !st) return st.error();
        result.samplesMs.push_back(ms);
        if (i == 0 && options_.warmupRuns == 0) result.firstRunMs = ms;
        if (options_.profile) result.runProfiles.push_back(std::move(control_.nodeProfiles));
        if (progress_) progress_({false, i + 1, options_.runs, ms});
    }
    const ThreadUse after = session_.threadUse();
    result.reducedRuns = static_cast<int>(after.reducedRuns - before.reducedRuns);
    // The fewest of the counted runs: the session's own minimum when any of them was reduced
    // (a warm-up run may have been reduced further; then this says at most that many).
    result.fewestThreads = result.reducedRuns > 0 ? after.fewest : result.threads;
    result.statistics = computeLatencyStatistics(result.samplesMs);
    result.weights = session_.weightMemory();
    if (options_.profile) {
        result.nodes = summarizeByNode(result.runProfiles);
        result.opTypes = summarizeByOpType(result.runProfiles);
    }
    return result;
}

std::vector<NodeTimeSummary> summarizeByNode(const std::vector<std::vector<NodeProfile>>& runs) {
    std::vector<NodeTimeSummary> nodes;
    std::unordered_map<std::string, std::size_t> index;
    double total = 0;
    for (const auto& run : runs)
        for (const auto& profile : run) {
            auto [it, inserted] = index.try_emplace(profile.nodeName, nodes.size());
            if (inserted) nodes.push_back({profile.nodeName, profile.opType});
            NodeTimeSummary& node = nodes[it->second];
            const double ms = static_cast<double>(profile.durationNs) / 1e6;
            node.totalMs += ms;
            node.calls++;
            total += ms;
        }
    const double runCount = runs.empty() ? 1.0 : static_cast<double>(runs.size());
    for (auto& node : nodes) {
        node.perRunMs = node.totalMs / runCount;
        node.share = total > 0 ? node.totalMs / total : 0;
    }
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const auto& a, const auto& b) { return a.totalMs > b.totalMs; });
    return nodes;
}

nlohmann::json benchmarkToJson(const BenchmarkResult& result) {
    const auto& s = result.statistics;
    nlohmann::json doc = {
        {"model", result.model},
        {"threads", result.threads},
        {"threads_reduced_runs", result.reducedRuns},
        {"fewest_threads", result.fewestThreads},
        {"warmup", result.warmupRuns},
        {"runs", s.runs},
        {"load_ms", result.loadMs},
        {"first_run_ms", result.firstRunMs},
        {"min_ms", s.minMs},
        {"mean_ms", s.meanMs},
        {"median_ms", s.medianMs},
        {"p90_ms", s.p90Ms},
        {"p99_ms", s.p99Ms},
        {"max_ms", s.maxMs},
        {"stddev_ms", s.stddevMs},
        {"samples_ms", result.samplesMs},
        {"weights_mapped_bytes", result.weights.mappedBytes},
        {"weights_copied_bytes", result.weights.copiedBytes + result.weights.reorderedBytes},
        {"weights_reordered_bytes", result.weights.reorderedBytes}};
    if (!result.profiled) return doc;
    const double runs = std::max(1, s.runs);
    doc["node_time_per_run_ms"] = result.nodeTimePerRunMs();
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& op : result.opTypes)
        ops.push_back({{"op_type", op.opType},
                       {"total_ms", op.totalMs},
                       {"per_run_ms", op.totalMs / runs},
                       {"calls", op.calls},
                       {"share", op.share}});
    doc["op_types"] = std::move(ops);
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& node : result.nodes)
        nodes.push_back({{"name", node.nodeName},
                         {"op_type", node.opType},
                         {"total_ms", node.totalMs},
                         {"per_run_ms", node.perRunMs},
                         {"calls", node.calls},
                         {"share", node.share}});
    doc["nodes"] = std::move(nodes);
    return doc;
}

namespace {

std::string formatMs(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", ms);
    return buf;
}

std::string formatPercent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * share);
    return buf;
}

// Markdown table cells: a `|` would end the cell, a newline the row.
std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n' || c == '\r')
            out += ' ';
        else
            out += c;
    }
    return out;
}

Status writeText(const std::filesystem::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::binary);
    if (!out) return makeError(file.string(), "cannot be written");
    out << text;
    out.close();
    if (!out) return makeError(file.string(), "write failed");
    return Ok{};
}

}  // namespace

std::string reducedThreadsNote(const BenchmarkResult& result) {
    return reducedThreadsNote(result.reducedRuns, result.statistics.runs, result.fewestThreads,
                              result.threads);
}

std::string benchmarkToMarkdown(const BenchmarkResult& result) {
    const auto& s = result.statistics;
    std::ostringstream md;
    md << "# Benchmark: " << (result.model.empty() ? std::string("model") : result.model) << "\n\n";
    md << s.runs << " counted runs after " << result.warmupRuns << " warm-up runs, "
       << result.threads << " intra-op thread" << (result.threads == 1 ? "" : "s");
    if (result.loadMs > 0) md << ", load " << formatMs(result.loadMs) << " ms";
    md << ".\n\n";
    if (const std::string note = reducedThreadsNote(result); !note.empty())
        md << "Fewer threads ran: " << note << ".\n\n";
    md << "| statistic | ms |\n|---|---:|\n";
    const std::pair<const char*, double> rows[] = {
        {"min", s.minMs}, {"mean", s.meanMs}, {"median (P50)", s.medianMs},  {"P90", s.p90Ms},
        {"P99", s.p99Ms}, {"max", s.maxMs},   {"std. deviation", s.stddevMs}};
    for (const auto& [name, value] : rows) md << "| " << name << " | " << formatMs(value) << " |\n";
    if (!result.profiled) return md.str();

    const double runs = std::max(1, s.runs);
    md << "\n## Time per operator type\n\nSummed node time per run: "
       << formatMs(result.nodeTimePerRunMs())
       << " ms.\n\n| op type | ms per run | share | calls per run |\n|---|---:|---:|---:|\n";
    for (const auto& op : result.opTypes)
        md << "| " << cell(op.opType) << " | " << formatMs(op.totalMs / runs) << " | "
           << formatPercent(op.share) << " | " << op.calls / s.runs << " |\n";
    md << "\n## Time per node\n\n| node | op type | ms per run | share |\n|---|---|---:|---:|\n";
    for (const auto& node : result.nodes)
        md << "| " << cell(node.nodeName) << " | " << cell(node.opType) << " | "
           << formatMs(node.perRunMs) << " | " << formatPercent(node.share) << " |\n";
    return md.str();
}

Status writeBenchmarkJson(const std::filesystem::path& file, const BenchmarkResult& result) {
    return writeText(file, benchmarkToJson(result).dump(2, ' ', false,
                                                        nlohmann::json::error_handler_t::replace) +
                               "\n");
}

Status writeBenchmarkMarkdown(const std::filesystem::path& file, const BenchmarkResult& result) {
    return writeText(file, benchmarkToMarkdown(result));
}

}  // namespace onnxlens::engine
