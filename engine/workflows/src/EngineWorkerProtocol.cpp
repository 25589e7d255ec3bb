#include "onnxlens/workflows/EngineWorkerProtocol.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "onnxlens/workflows/LatencyStatistics.h"

namespace onnxlens::engine {

namespace {

using nlohmann::json;

std::string toHex(const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

int hexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool fromHex(const std::string& hex, std::string& bytes) {
    if (hex.size() % 2 != 0) return false;
    bytes.resize(hex.size() / 2);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const int high = hexDigit(hex[2 * i]), low = hexDigit(hex[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        bytes[i] = static_cast<char>(high * 16 + low);
    }
    return true;
}

Error protocolError(const std::string& what) { return makeError("engine process reply", what); }

// Runs `read` (which uses json::at and get<>), turning nlohmann's exceptions into an error.
template <typename T, typename F>
Result<T> parse(const char* what, F&& read) {
    try {
        return read();
    } catch (const nlohmann::json::exception& e) {
        return protocolError(std::string(what) + ": " + e.what());
    }
}

// JSON has no NaN or infinity (nlohmann writes null): those travel as strings.
json number(double value) {
    if (std::isfinite(value)) return value;
    return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
}

double numberFrom(const json& j) {
    if (!j.is_string()) return j.get<double>();
    const auto text = j.get<std::string>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    throw json::type_error::create(302, "not a number: " + text, &j);
}

json comparisonToJson(const ComparisonResult& c) {
    return {{"passed", c.passed},
            {"problem", c.problem},
            {"maxAbsError", number(c.maxAbsError)},
            {"maxRelError", number(c.maxRelError)},
            {"meanAbsError", number(c.meanAbsError)},
            {"fractionOutside", number(c.fractionOutside)},
            {"outsideCount", c.outsideCount},
            {"elementCount", c.elementCount},
            {"worstIndex", c.worstIndex},
            {"worstActual", number(c.worstActual)},
            {"worstExpected", number(c.worstExpected)},
            {"cosineSimilarity", number(c.cosineSimilarity)},
            {"referenceMaxAbs", number(c.referenceMaxAbs)},
            {"referenceConstant", c.referenceConstant},
            {"floating", c.floating}};
}

ComparisonResult comparisonFromJson(const json& j) {
    ComparisonResult c;
    c.passed = j.at("passed").get<bool>();
    c.problem = j.at("problem").get<std::string>();
    c.maxAbsError = numberFrom(j.at("maxAbsError"));
    c.maxRelError = numberFrom(j.at("maxRelError"));
    c.meanAbsError = numberFrom(j.at("meanAbsError"));
    c.fractionOutside = numberFrom(j.at("fractionOutside"));
    c.outsideCount = j.at("outsideCount").get<std::int64_t>();
    c.elementCount = j.at("elementCount").get<std::int64_t>();
    c.worstIndex = j.at("worstIndex").get<std::vector<std::int64_t>>();
    c.worstActual = numberFrom(j.at("worstActual"));
    c.worstExpected = numberFrom(j.at("worstExpected"));
    c.cosineSimilarity = numberFrom(j.at("cosineSimilarity"));
    c.referenceMaxAbs = numberFrom(j.at("referenceMaxAbs"));
    c.referenceConstant = j.at("referenceConstant").get<bool>();
    c.floating = j.at("floating").get<bool>();
    return c;
}

json axesRunToJson(const DynamicAxesRun& run) {
    return {{"label", run.label}, {"bindings", run.bindings},
            {"ok", run.ok},       {"rejected", run.rejected},
            {"error", run.error}, {"outputShapes", run.outputShapes}};
}

DynamicAxesRun axesRunFromJson(const json& j) {
    DynamicAxesRun run;
    run.label = j.at("label").get<std::string>();
    run.bindings = j.at("bindings").get<SymbolBindings>();
    run.ok = j.at("ok").get<bool>();
    run.rejected = j.at("rejected").get<bool>();
    run.error = j.at("error").get<std::string>();
    run.outputShapes = j.at("outputShapes").get<std::vector<Shape>>();
    return run;
}

}  // namespace

json ioInfosToJson(const std::vector<Session::IoInfo>& infos) {
    json list = json::array();
    for (const auto& info : infos)
        list.push_back({{"name", info.name}, {"type", toHex(info.type.SerializeAsString())}});
    return list;
}

Result<std::vector<Session::IoInfo>> ioInfosFromJson(const json& list) {
    return parse<std::vector<Session::IoInfo>>(
        "inputs and outputs", [&]() -> Result<std::vector<Session::IoInfo>> {
            std::vector<Session::IoInfo> infos;
            for (const auto& entry : list) {
                Session::IoInfo info;
                info.name = entry.at("name").get<std::string>();
                std::string bytes;
                if (!fromHex(entry.at("type").get<std::string>(), bytes) ||
                    !info.type.ParseFromString(bytes))
                    return protocolError("the type of '" + info.name + "' is not a TypeProto");
                infos.push_back(std::move(info));
            }
            return infos;
        });
}

json benchmarkMeasurementsToJson(const BenchmarkResult& result) {
    json runs = json::array();
    for (const auto& run : result.runProfiles) {
        json nodes = json::array();
        for (const auto& node : run)
            nodes.push_back({node.nodeName, node.opType, node.startNs, node.durationNs});
        runs.push_back(std::move(nodes));
    }
    return {
        {"threads", result.threads},
        {"reducedRuns", result.reducedRuns},
        {"fewestThreads", result.fewestThreads},
        {"warmupRuns", result.warmupRuns},
        {"firstRunMs", result.firstRunMs},
        {"weights",
         {result.weights.mappedBytes, result.weights.copiedBytes, result.weights.reorderedBytes}},
        {"dims", result.dims},
        {"samplesMs", result.samplesMs},
        {"profiled", result.profiled},
        {"runProfiles", std::move(runs)}};
}

Result<BenchmarkResult> benchmarkFromMeasurementsJson(const json& j) {
    return parse<BenchmarkResult>("benchmark", [&]() -> Result<BenchmarkResult> {
        BenchmarkResult result;
        result.threads = j.at("threads").get<int>();
        result.reducedRuns = j.value("reducedRuns", 0);
        result.fewestThreads = j.value("fewestThreads", result.threads);
        result.warmupRuns = j.at("warmupRuns").get<int>();
        result.firstRunMs = j.at("firstRunMs").get<double>();
        const auto& weights = j.at("weights");
        result.weights.mappedBytes = weights.at(0).get<std::uint64_t>();
        result.weights.copiedBytes = weights.at(1).get<std::uint64_t>();
        result.weights.reorderedBytes = weights.at(2).get<std::uint64_t>();
        result.dims = j.at("dims").get<std::map<std::string, std::int64_t>>();
        result.samplesMs = j.at("samplesMs").get<std::vector<double>>();
        result.profiled = j.at("profiled").get<bool>();
        for (const auto& run : j.at("runProfiles")) {
            std::vector<NodeProfile> nodes;
            nodes.reserve(run.size());
            for (const auto& node : run)
                nodes.push_back({node.at(0).get<std::string>(), node.at(1).get<std::string>(),
                                 node.at(2).get<std::int64_t>(), node.at(3).get<std::int64_t>()});
            result.runProfiles.push_back(std::move(nodes));
        }
        // As BenchmarkRunner::run computes them.
        result.statistics = computeLatencyStatistics(result.samplesMs);
        if (result.profiled) {
            result.nodes = summarizeByNode(result.runProfiles);
            result.opTypes = summarizeByOpType(result.runProfiles);
        }
        return result;
    });
}

json dynamicAxesOptionsToJson(const DynamicAxesCheckOptions& options) {
    return {{"base", options.base},
            {"defaultDim", options.defaultDim},
            {"rtol", options.tolerance.rtol},
            {"atol", options.tolerance.atol},
            {"seed", options.seed}};
}

Result<DynamicAxesCheckOptions> dynamicAxesOptionsFromJson(const json& j) {
    return parse<DynamicAxesCheckOptions>(
        "dynamic-axes options", [&]() -> Result<DynamicAxesCheckOptions> {
            DynamicAxesCheckOptions options;
            options.base = j.at("base").get<SymbolBindings>();
            options.defaultDim = j.at("defaultDim").get<std::int64_t>();
            options.tolerance.rtol = j.at("rtol").get<double>();
            options.tolerance.atol = j.at("atol").get<double>();
            options.seed = j.at("seed").get<std::uint64_t>();
            return options;
        });
}

json dynamicAxesResultToJson(const DynamicAxesCheckResult& result) {
    json runs = json::array(), rejected = json::array(), outputs = json::array();
    for (const auto& run : result.runs) runs.push_back(axesRunToJson(run));
    for (const auto& run : result.rejected) rejected.push_back(axesRunToJson(run));
    for (const auto& output : result.outputs)
        outputs.push_back({{"name", output.name},
                           {"declared", output.declared},
                           {"shapes", output.shapes},
                           {"shapesFollow", output.shapesFollow},
                           {"problem", output.problem},
                           {"firstItemCompared", output.firstItemCompared},
                           {"firstItem", comparisonToJson(output.firstItem)},
                           {"movedWith", output.movedWith}});
    return {{"verdict", static_cast<int>(result.verdict)},
            {"symbols", result.symbols},
            {"unknownDims", result.unknownDims},
            {"unexercised", result.unexercised},
            {"batchSymbol", result.batchSymbol},
            {"runs", std::move(runs)},
            {"rejected", std::move(rejected)},
            {"rejections", result.rejections},
            {"outputs", std::move(outputs)},
            {"problems", result.problems},
            {"summary", result.summary}};
}

Result<DynamicAxesCheckResult> dynamicAxesResultFromJson(const json& j) {
    return parse<DynamicAxesCheckResult>(
        "dynamic-axes result", [&]() -> Result<DynamicAxesCheckResult> {
            DynamicAxesCheckResult result;
            const int verdict = j.at("verdict").get<int>();
            if (verdict < 0 ||
                verdict > static_cast<int>(DynamicAxesCheckResult::Verdict::NotExercised))
                return protocolError("unknown dynamic-axes verdict " + std::to_string(verdict));
            result.verdict = static_cast<DynamicAxesCheckResult::Verdict>(verdict);
            result.symbols = j.at("symbols").get<std::vector<std::string>>();
            result.unknownDims = j.at("unknownDims").get<std::vector<std::string>>();
            result.unexercised = j.at("unexercised").get<std::vector<std::string>>();
            result.batchSymbol = j.at("batchSymbol").get<std::string>();
            for (const auto& run : j.at("runs")) result.runs.push_back(axesRunFromJson(run));
            for (const auto& run : j.at("rejected"))
                result.rejected.push_back(axesRunFromJson(run));
            result.rejections = j.at("rejections").get<std::vector<std::string>>();
            for (const auto& o : j.at("outputs")) {
                DynamicOutputCheck output;
                output.name = o.at("name").get<std::string>();
                output.declared = o.at("declared").get<std::string>();
                output.shapes = o.at("shapes").get<std::vector<Shape>>();
                output.shapesFollow = o.at("shapesFollow").get<bool>();
                output.problem = o.at("problem").get<std::string>();
                output.firstItemCompared = o.at("firstItemCompared").get<bool>();
                output.firstItem = comparisonFromJson(o.at("firstItem"));
                output.movedWith = o.at("movedWith").get<std::vector<std::string>>();
                result.outputs.push_back(std::move(output));
            }
            result.problems = j.at("problems").get<std::vector<std::string>>();
            result.summary = j.at("summary").get<std::string>();
            return result;
        });
}

json sweepPointToJson(const SweepPoint& point) {
    const auto& s = point.statistics;
    return {
        {"dims", point.dims},
        {"error", point.error},
        {"statistics",
         {s.runs, s.minMs, s.meanMs, s.medianMs, s.p90Ms, s.p99Ms, s.maxMs, s.stddevMs, s.p10Ms}},
        {"itemsPerSecond", point.itemsPerSecond}};
}

Result<SweepPoint> sweepPointFromJson(const json& j) {
    return parse<SweepPoint>("sweep point", [&]() -> Result<SweepPoint> {
        SweepPoint point;
        point.dims = j.at("dims").get<SymbolBindings>();
        point.error = j.at("error").get<std::string>();
        const auto& s = j.at("statistics");
        point.statistics.runs = s.at(0).get<int>();
        point.statistics.minMs = s.at(1).get<double>();
        point.statistics.meanMs = s.at(2).get<double>();
        point.statistics.medianMs = s.at(3).get<double>();
        point.statistics.p90Ms = s.at(4).get<double>();
        point.statistics.p99Ms = s.at(5).get<double>();
        point.statistics.maxMs = s.at(6).get<double>();
        point.statistics.stddevMs = s.at(7).get<double>();
        point.statistics.p10Ms = s.at(8).get<double>();
        point.itemsPerSecond = j.at("itemsPerSecond").get<double>();
        return point;
    });
}

json valueRangesToJson(const ValueRanges& ranges) {
    json object = json::object();
    for (const auto& [name, range] : ranges)
        object[name] = {number(range.low), number(range.high), range.reason};
    return object;
}

Result<ValueRanges> valueRangesFromJson(const json& j) {
    return parse<ValueRanges>("index ranges", [&]() -> Result<ValueRanges> {
        if (!j.is_object()) return protocolError("index ranges: not an object");
        ValueRanges ranges;
        for (const auto& [name, entry] : j.items()) {
            ValueRange range;
            range.low = numberFrom(entry.at(0));
            range.high = numberFrom(entry.at(1));
            range.reason = entry.at(2).get<std::string>();
            ranges[name] = std::move(range);
        }
        return ranges;
    });
}

json decodeMeasurementsToJson(const DecodeResult& result) {
    json steps = json::array();
    for (double ms : result.stepMs) steps.push_back(number(ms));
    return {{"promptIds", result.promptIds},
            {"generatedIds", result.generatedIds},
            {"prefillMs", number(result.prefillMs)},
            {"stepMs", std::move(steps)},
            {"stepContext", result.stepContext},
            {"kvCacheBytes", result.kvCacheBytes},
            {"finalContext", result.finalContext},
            {"cancelled", result.cancelled},
            {"runs", result.runs},
            {"reducedRuns", result.reducedRuns},
            {"fewestThreads", result.fewestThreads}};
}

Result<DecodeResult> decodeFromMeasurementsJson(const json& j) {
    return parse<DecodeResult>("decode", [&]() -> Result<DecodeResult> {
        DecodeResult result;
        result.promptIds = j.at("promptIds").get<std::vector<std::int64_t>>();
        result.generatedIds = j.at("generatedIds").get<std::vector<std::int64_t>>();
        result.prefillMs = numberFrom(j.at("prefillMs"));
        for (const auto& ms : j.at("stepMs")) result.stepMs.push_back(numberFrom(ms));
        result.stepContext = j.at("stepContext").get<std::vector<std::int64_t>>();
        if (result.stepContext.size() != result.stepMs.size())
            return protocolError("decode: " + std::to_string(result.stepMs.size()) +
                                 " step times but " + std::to_string(result.stepContext.size()) +
                                 " contexts");
        result.kvCacheBytes = j.at("kvCacheBytes").get<std::uint64_t>();
        result.finalContext = j.at("finalContext").get<std::int64_t>();
        result.cancelled = j.at("cancelled").get<bool>();
        result.runs = j.value("runs", std::int64_t{0});
        result.reducedRuns = j.value("reducedRuns", std::int64_t{0});
        result.fewestThreads = j.value("fewestThreads", 0);
        computeDecodeStatistics(result);  // as runDecodeLoop computes them
        return result;
    });
}

json decodeStepToJson(const DecodeStep& step) {
    return {step.index, step.context, step.token, number(step.ms)};
}

Result<DecodeStep> decodeStepFromJson(const json& j) {
    return parse<DecodeStep>("decode step", [&]() -> Result<DecodeStep> {
        DecodeStep step;
        step.index = j.at(0).get<int>();
        step.context = j.at(1).get<std::int64_t>();
        step.token = j.at(2).get<std::int64_t>();
        step.ms = numberFrom(j.at(3));
        return step;
    });
}

json optimizationReportToJson(const OptimizationReport& report) {
    json passes = json::array();
    for (const auto& pass : report.passes) passes.push_back({pass.pass, pass.rewrites});
    return {{"passes", std::move(passes)},
            {"nodesBefore", report.nodesBefore},
            {"nodesAfter", report.nodesAfter}};
}

Result<OptimizationReport> optimizationReportFromJson(const json& j) {
    return parse<OptimizationReport>("optimization report", [&]() -> Result<OptimizationReport> {
        OptimizationReport report;
        for (const auto& pass : j.at("passes"))
            report.passes.push_back({pass.at(0).get<std::string>(), pass.at(1).get<int>()});
        report.nodesBefore = j.at("nodesBefore").get<int>();
        report.nodesAfter = j.at("nodesAfter").get<int>();
        return report;
    });
}

}  // namespace onnxlens::engine
