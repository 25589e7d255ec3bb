#include "onnxlens/workflows/LatencyStatistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

namespace onnxlens::engine {

namespace {

double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = rank - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::string jsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

LatencyStatistics computeLatencyStatistics(std::vector<double> samples) {
    LatencyStatistics s;
    s.runs = static_cast<int>(samples.size());
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.minMs = samples.front();
    s.maxMs = samples.back();
    s.meanMs =
        std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    s.medianMs = percentile(samples, 50);
    s.p10Ms = percentile(samples, 10);
    s.p90Ms = percentile(samples, 90);
    s.p99Ms = percentile(samples, 99);
    double sq = 0;
    for (double v : samples) sq += (v - s.meanMs) * (v - s.meanMs);
    s.stddevMs = samples.size() > 1 ? std::sqrt(sq / static_cast<double>(samples.size() - 1)) : 0.0;
    return s;
}

LatencyComparison compareLatencies(const LatencyStatistics& a, const LatencyStatistics& b,
                                   bool interleaved, const std::string& aName,
                                   const std::string& bName) {
    LatencyComparison c;
    c.a = a;
    c.b = b;
    c.interleaved = interleaved;
    c.ratio = b.medianMs > 0 ? a.medianMs / b.medianMs : 0;
    const double overlap = std::min(a.p90Ms, b.p90Ms) - std::max(a.p10Ms, b.p10Ms);
    const double difference = std::fabs(a.medianMs - b.medianMs);
    c.withinNoise = overlap > difference;
    char text[200];
    for (const auto& [side, name] : {std::pair{&a, &aName}, std::pair{&b, &bName}}) {
        if (side->coefficientOfVariation() > kBusyCoefficientOfVariation) {
            c.busy = true;
            std::snprintf(text, sizeof text,
                          "the machine was busy: rerun (%s's runs vary %.0f%%, more than %.0f%%)",
                          name->c_str(), 100 * side->coefficientOfVariation(),
                          100 * kBusyCoefficientOfVariation);
            c.note = text;
            break;
        }
    }
    if (!c.busy && c.withinNoise)
        c.note = "within noise: the P10-P90 spreads overlap by more than the medians differ";
    return c;
}

Result<LatencyComparison> timeInterleaved(const TimedRun& a, const TimedRun& b, int warmup,
                                          int runs, const std::function<bool()>& cancelled,
                                          const std::string& aName, const std::string& bName) {
    std::vector<double> samplesA, samplesB;
    for (int round = 0; round < warmup + runs; ++round) {
        for (int side = 0; side < 2; ++side) {
            if (cancelled && cancelled()) return Error{"cancelled"};
            auto ms = (side == 0 ? a : b)();
            if (!ms) return Error{(side == 0 ? aName : bName) + ": " + ms.error().message};
            if (round >= warmup) (side == 0 ? samplesA : samplesB).push_back(*ms);
        }
    }
    return compareLatencies(computeLatencyStatistics(samplesA), computeLatencyStatistics(samplesB),
                            true, aName, bName);
}

std::vector<OpTypeProfile> summarizeByOpType(const std::vector<std::vector<NodeProfile>>& runs) {
    std::map<std::string, OpTypeProfile> byType;
    double total = 0;
    for (const auto& run : runs)
        for (const auto& node : run) {
            auto& entry = byType[node.opType];
            entry.opType = node.opType;
            entry.totalMs += static_cast<double>(node.durationNs) / 1e6;
            entry.calls++;
            total += static_cast<double>(node.durationNs) / 1e6;
        }
    std::vector<OpTypeProfile> out;
    for (auto& [type, entry] : byType) {
        entry.share = total > 0 ? entry.totalMs / total : 0;
        out.push_back(entry);
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.totalMs > b.totalMs; });
    return out;
}

Status writeChromeTrace(const std::filesystem::path& file,
                        const std::vector<std::vector<NodeProfile>>& runs) {
    std::ofstream out(file);
    if (!out) return makeError(file.string(), "cannot be written");
    out << "[\n";
    bool first = true;
    double runOffsetUs = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        double runEndUs = 0;
        for (const auto& node : runs[r]) {
            const double ts = runOffsetUs + static_cast<double>(node.startNs) / 1000.0;
            const double dur = static_cast<double>(node.durationNs) / 1000.0;
            runEndUs =
                std::max(runEndUs, static_cast<double>(node.startNs + node.durationNs) / 1000.0);
            if (!first) out << ",\n";
            first = false;
            out << "{\"cat\":\"Node\",\"name\":\""
                << jsonEscape(node.nodeName.empty() ? node.opType : node.nodeName)
                << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << r << ",\"ts\":" << ts
                << ",\"dur\":" << dur << ",\"args\":{\"op_name\":\"" << jsonEscape(node.opType)
                << "\",\"run\":" << r << "}}";
        }
        runOffsetUs += runEndUs + 10.0;
    }
    out << "\n]\n";
    if (!out) return makeError(file.string(), "write failed");
    return Ok{};
}

}  // namespace onnxlens::engine
