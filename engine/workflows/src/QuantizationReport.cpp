#include "onnxlens/workflows/QuantizationReport.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <set>
#include <sstream>

#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/ReferenceRun.h"
#include "onnxlens/workflows/TensorStatistics.h"

namespace onnxlens::engine {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Feeds = std::map<std::string, Value>;

std::string format(const char* fmt, ...) {
    char buffer[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    return buffer;
}

const Error kCancelled{"quantization report cancelled"};

bool cancelled(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(); }

// The model with `extra` values added to its graph outputs (those not already there), so that
// one run returns the quantized nodes' outputs too.
LoadedModel withExtraOutputs(const LoadedModel& model, const onnx::ModelProto& proto,
                             const std::vector<std::string>& extra) {
    LoadedModel copy;
    copy.path = model.path;
    copy.directory = model.directory;
    copy.fileBytes = model.fileBytes;
    auto probe = std::make_shared<onnx::ModelProto>(proto);
    std::set<std::string> outputs;
    for (const auto& o : probe->graph().output()) outputs.insert(o.name());
    for (const auto& name : extra)
        if (outputs.insert(name).second) probe->mutable_graph()->add_output()->set_name(name);
    copy.proto = std::move(probe);
    return copy;
}

struct InputSet {
    std::string name;
    Feeds feeds;
};

Result<std::vector<InputSet>> inputSets(const QuantizedModelFile& q, const Session& session,
                                        const QuantizationReportOptions& options) {
    std::vector<InputSet> sets;
    if (options.useTestDataSets) {
        auto found = discoverTestDataSets(q.floatModel.path, *q.floatModel.proto);
        if (!found) return found.error();
        for (const auto& set : *found) {
            auto feeds = feedsFromTestDataSet(session, set);
            if (!feeds) return feeds.error();
            sets.push_back({set.directory.filename().string(), std::move(*feeds)});
        }
    }
    if (!sets.empty()) return sets;
    for (int k = 0; k < std::max(1, options.randomInputSets); ++k) {
        // prepareFeeds seeds input i with seed + i: sets start far enough apart not to share data.
        // The same inputs `run --seed` makes: integer inputs that index a table stay inside it.
        const std::uint64_t seed = options.seed + static_cast<std::uint64_t>(k) * 1000;
        auto feeds = prepareSessionFeeds(session, {}, options.dims, seed);
        if (!feeds) return makeError(q.input.string(), feeds.error().message);
        sets.push_back({"random (seed " + std::to_string(seed) + ")", std::move(*feeds)});
    }
    return sets;
}

// name -> value of one run, by the session's output names.
std::map<std::string, Value> byName(const Session& session, std::vector<Value> values) {
    std::map<std::string, Value> out;
    for (std::size_t i = 0; i < values.size() && i < session.outputs().size(); ++i)
        out.emplace(session.outputs()[i].name, std::move(values[i]));
    return out;
}

Result<std::unique_ptr<Session>> compile(LoadedModel&& model, int threads,
                                         const std::string& what) {
    SessionOptions options;
    options.threads = threads;
    // The figures must come out the same when rerun at this thread count.
    options.adaptThreadsToLoad = false;
    auto session = Session::create(std::move(model), options);
    if (!session) return makeError(what, session.error().message);
    return std::move(*session);
}

Json latencyJson(const LatencyStatistics& s) {
    return {{"runs", s.runs},          {"min_ms", s.minMs},      {"mean_ms", s.meanMs},
            {"median_ms", s.medianMs}, {"p90_ms", s.p90Ms},      {"p99_ms", s.p99Ms},
            {"max_ms", s.maxMs},       {"stddev_ms", s.stddevMs}};
}

Json sqnrJson(double db) { return std::isfinite(db) ? Json(db) : Json("inf"); }

Json figuresJson(const AgreementFigures& f) {
    return {{"elements", f.elements},
            {"max_abs_error", f.maxAbsError},
            {"mean_abs_error", f.meanAbsError},
            {"cosine", f.cosine},
            {"sqnr_db", sqnrJson(f.sqnrDb)}};
}

std::string bytesText(std::uint64_t bytes) {
    if (bytes >= 10'000'000) return format("%.1f MB", static_cast<double>(bytes) / 1e6);
    if (bytes >= 10'000) return format("%.1f kB", static_cast<double>(bytes) / 1e3);
    return std::to_string(bytes) + " B";
}

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
    std::string s;
    for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
    return s;
}

}  // namespace

std::string formatSqnr(double db) {
    return std::isfinite(db) ? format("%.1f dB", db) : std::string("inf dB");
}

bool AgreementAccumulator::add(const Tensor& reference, const Tensor& actual) {
    if (reference.shape() != actual.shape()) return false;
    std::vector<double> ref, act;
    ref.reserve(static_cast<std::size_t>(reference.numel()));
    act.reserve(static_cast<std::size_t>(actual.numel()));
    if (!forEachAsDouble(reference, [&](double v) { ref.push_back(v); }) ||
        !forEachAsDouble(actual, [&](double v) { act.push_back(v); }))
        return false;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i], a = act[i], e = a - r;
        sumRef2_ += r * r;
        sumAct2_ += a * a;
        sumDot_ += r * a;
        sumErr2_ += e * e;
        sumAbs_ += std::fabs(e);
        maxAbs_ = std::max(maxAbs_, std::fabs(e));
    }
    n_ += static_cast<std::int64_t>(ref.size());
    return true;
}

AgreementFigures AgreementAccumulator::figures() const {
    AgreementFigures f;
    f.elements = n_;
    f.maxAbsError = maxAbs_;
    f.meanAbsError = n_ ? sumAbs_ / static_cast<double>(n_) : 0.0;
    if (sumRef2_ == 0 && sumAct2_ == 0)
        f.cosine = 1;
    else if (sumRef2_ == 0 || sumAct2_ == 0)
        f.cosine = 0;
    else
        f.cosine = sumDot_ / std::sqrt(sumRef2_ * sumAct2_);
    // Signal power over noise power of the whole tensor (every input set).
    if (sumErr2_ == 0)
        f.sqnrDb = std::numeric_limits<double>::infinity();
    else if (sumRef2_ == 0)
        f.sqnrDb = -std::numeric_limits<double>::infinity();
    else
        f.sqnrDb = 10.0 * std::log10(sumRef2_ / sumErr2_);
    return f;
}

Result<QuantizationReport> buildQuantizationReport(
    const QuantizedModelFile& q, std::uint64_t int8Bytes, const std::string& int8Name,
    const QuantizationReportOptions& options, const QuantizationReportProgressCallback& progress,
    const std::atomic<bool>* cancel) {
    QuantizationReport report;
    report.floatModel = q.input.string();
    report.int8Model = int8Name;
    report.tolerance = options.tolerance;
    report.quantizedPerOpType = q.result.quantizedPerOpType;
    report.skipped = q.result.skipped;
    report.floatBytes = q.bytesBefore;
    report.int8Bytes = int8Bytes;
    report.sizeRatio =
        int8Bytes ? static_cast<double>(q.bytesBefore) / static_cast<double>(int8Bytes) : 0.0;
    for (const auto& prop : q.result.model.metadata_props())
        if (prop.key() == "onnxlens.quantization") {
            const Json settings = Json::parse(prop.value(), nullptr, false);
            if (settings.is_object()) {
                report.settings.perChannel = settings.value("per_channel", false);
                const std::string format = settings.value("format", "qoperator");
                report.settings.format = format == "qdq"    ? QuantizationFormat::QDQ
                                         : format == "int4" ? QuantizationFormat::Int4
                                                            : QuantizationFormat::QOperator;
                report.settings.blockSize = settings.value("block_size", std::int64_t{32});
                report.settings.symmetric = settings.value("symmetric_weights", true);
                report.settings.accuracyLevel = settings.value("accuracy_level", std::int64_t{0});
                report.settings.opTypes = settings.value("op_types", std::vector<std::string>{});
                report.settings.excludedNodes =
                    settings.value("excluded", std::vector<std::string>{});
            }
        }

    std::vector<std::string> nodeOutputs;
    for (const auto& n : q.result.quantized) nodeOutputs.push_back(n.output);
    const int steps = options.benchmark ? 4 : 2;
    auto step = [&](const std::string& what, int done) {
        if (progress) progress({what, done, steps});
    };

    // 1. The float model, with the quantized nodes' outputs as extra graph outputs.
    step("running the float model", 0);
    std::vector<InputSet> sets;
    std::vector<std::map<std::string, Value>> floatValues;
    {
        auto session = compile(withExtraOutputs(q.floatModel, *q.floatModel.proto, nodeOutputs),
                               options.threads, report.floatModel);
        if (!session) return session.error();
        auto found = inputSets(q, **session, options);
        if (!found) return found.error();
        sets = std::move(*found);
        for (const auto& set : sets) {
            if (cancelled(cancel)) return kCancelled;
            auto outputs = (*session)->run(set.feeds);
            if (!outputs)
                return makeError(report.floatModel, set.name + ": " + outputs.error().message);
            floatValues.push_back(byName(**session, std::move(*outputs)));
        }
    }
    for (const auto& set : sets) report.inputSets.push_back(set.name);

    // 2. The int8 model on the same inputs, compared as it goes.
    step("running the int8 model", 1);
    std::vector<std::string> graphOutputs;
    for (const auto& o : q.result.model.graph().output()) graphOutputs.push_back(o.name());
    std::map<std::string, AgreementAccumulator> outputAcc, nodeAcc;
    std::map<std::string, std::string> problems;
    std::map<std::string, std::int64_t> rows, top1, logitColumns;
    std::map<std::string, double> top5;
    {
        LoadedModel int8;
        int8.path = int8Name;
        int8.directory = q.floatModel.directory;
        auto session =
            compile(withExtraOutputs(int8, q.result.model, nodeOutputs), options.threads, int8Name);
        if (!session) return session.error();
        for (std::size_t s = 0; s < sets.size(); ++s) {
            if (cancelled(cancel)) return kCancelled;
            auto outputs = (*session)->run(sets[s].feeds);
            if (!outputs) return makeError(int8Name, sets[s].name + ": " + outputs.error().message);
            auto values = byName(**session, std::move(*outputs));
            auto compare = [&](const std::string& name,
                               std::map<std::string, AgreementAccumulator>& acc, bool output) {
                auto f = floatValues[s].find(name);
                auto i = values.find(name);
                if (f == floatValues[s].end() || i == values.end() || !f->second.isTensor() ||
                    !i->second.isTensor()) {
                    problems[name] = "not a tensor in both models";
                    return;
                }
                const Tensor& ref = f->second.tensor();
                const Tensor& act = i->second.tensor();
                if (!acc[name].add(ref, act)) {
                    problems[name] = "float " + shapeToString(ref.shape()) + " vs int8 " +
                                     shapeToString(act.shape());
                    return;
                }
                if (output && looksLikeLogits(ref) && looksLikeLogits(act)) {
                    const std::int64_t classes = ref.dim(1);
                    const std::int64_t k = std::min<std::int64_t>(5, classes);
                    logitColumns[name] = classes;
                    for (std::int64_t r = 0; r < ref.dim(0); ++r) {
                        const auto refTop = topK(ref, static_cast<int>(k), r);
                        const auto actTop = topK(act, static_cast<int>(k), r);
                        rows[name]++;
                        if (refTop.front().index == actTop.front().index) top1[name]++;
                        std::int64_t common = 0;
                        for (const auto& a : refTop)
                            for (const auto& b : actTop) common += a.index == b.index;
                        top5[name] += static_cast<double>(common) / static_cast<double>(k);
                    }
                }
            };
            for (const auto& name : graphOutputs) compare(name, outputAcc, true);
            for (const auto& name : nodeOutputs) compare(name, nodeAcc, false);
        }
    }
    report.passed = true;
    for (const auto& name : graphOutputs) {
        OutputAgreement o;
        o.name = name;
        o.figures = outputAcc[name].figures();
        if (auto p = problems.find(name); p != problems.end()) o.problem = p->second;
        if (auto r = rows.find(name); r != rows.end() && r->second > 0) {
            o.logits = true;
            o.rows = r->second;
            o.top1Agreement = static_cast<double>(top1[name]) / static_cast<double>(r->second);
            o.top5Overlap = top5[name] / static_cast<double>(r->second);
        }
        o.passed = o.problem.empty() && o.figures.sqnrDb >= options.tolerance.minSqnrDb &&
                   (options.tolerance.maxAbsError <= 0 ||
                    o.figures.maxAbsError <= options.tolerance.maxAbsError);
        report.passed = report.passed && o.passed;
        report.outputs.push_back(std::move(o));
    }
    for (const auto& n : q.result.quantized) {
        NodeAgreement a{n.name, n.opType, n.output, n.int8Nodes, nodeAcc[n.output].figures()};
        report.nodes.push_back(std::move(a));
    }
    std::stable_sort(report.nodes.begin(), report.nodes.end(),
                     [](const NodeAgreement& a, const NodeAgreement& b) {
                         return a.figures.sqnrDb < b.figures.sqnrDb;
                     });

    // 3. Latency of both, same threads, on the first input set.
    if (options.benchmark) {
        auto time = [&](LoadedModel&& model, const std::string& what, int done,
                        LatencyStatistics& into) -> Status {
            step("timing the " + what + " model", done);
            auto session = compile(std::move(model), options.threads, what);
            if (!session) return session.error();
            report.threads = (*session)->threads();
            BenchmarkRunner runner(**session, {options.warmup, options.runs, false});
            runner.setProgressCallback([&](const BenchmarkProgress&) {
                if (cancelled(cancel)) runner.cancel();
            });
            auto result = runner.run(sets.front().feeds);
            if (cancelled(cancel)) return kCancelled;
            if (!result) return makeError(what, result.error().message);
            into = result->statistics;
            return Ok{};
        };
        if (auto st = time(withExtraOutputs(q.floatModel, *q.floatModel.proto, {}),
                           report.floatModel, 2, report.floatLatency);
            !st)
            return st.error();
        LoadedModel int8;
        int8.path = int8Name;
        int8.directory = q.floatModel.directory;
        if (auto st =
                time(withExtraOutputs(int8, q.result.model, {}), int8Name, 3, report.int8Latency);
            !st)
            return st.error();
        report.benchmarked = true;
        report.warmup = options.warmup;
        report.speedup = report.int8Latency.medianMs > 0
                             ? report.floatLatency.medianMs / report.int8Latency.medianMs
                             : 0;
    }
    step("done", steps);
    return report;
}

void setQuantizedModelBytes(QuantizationReport& report, std::uint64_t int8Bytes) {
    report.int8Bytes = int8Bytes;
    report.sizeRatio =
        int8Bytes ? static_cast<double>(report.floatBytes) / static_cast<double>(int8Bytes) : 0.0;
}

Json quantizationReportJson(const QuantizationReport& report) {
    Json outputs = Json::array(), nodes = Json::array(), skipped = Json::array();
    for (const auto& o : report.outputs) {
        Json j = figuresJson(o.figures);
        j["name"] = o.name;
        j["logits"] = o.logits;
        if (o.logits) {
            j["rows"] = o.rows;
            j["top1_agreement"] = o.top1Agreement;
            j["top5_overlap"] = o.top5Overlap;
        }
        j["passed"] = o.passed;
        if (!o.problem.empty()) j["problem"] = o.problem;
        outputs.push_back(std::move(j));
    }
    for (const auto& n : report.nodes) {
        Json j = figuresJson(n.figures);
        j["name"] = n.name;
        j["op_type"] = n.opType;
        j["output"] = n.output;
        j["int8_nodes"] = n.int8Nodes;
        nodes.push_back(std::move(j));
    }
    for (const auto& s : report.skipped)
        skipped.push_back({{"name", s.name}, {"op_type", s.opType}, {"reason", s.reason}});
    const bool int4 = report.settings.format == QuantizationFormat::Int4;
    Json doc = {
        {"float_model", report.floatModel},
        {"int8_model", report.int8Model},
        {"settings",
         {{"method", int4 ? "weight-only" : "dynamic"},
          {"weight_type", int4 ? "int4" : "int8"},
          {"format", quantizationFormatName(report.settings.format)},
          {"per_channel", report.settings.perChannel},
          {"op_types", report.settings.opTypes},
          {"excluded", report.settings.excludedNodes}}},
        {"tolerance",
         {{"min_sqnr_db", report.tolerance.minSqnrDb},
          {"max_abs_error",
           report.tolerance.maxAbsError > 0 ? Json(report.tolerance.maxAbsError) : Json()}}},
        {"input_sets", report.inputSets},
        {"outputs", outputs},
        {"nodes", nodes},
        {"quantized_per_op_type", report.quantizedPerOpType},
        {"skipped", skipped},
        {"size",
         {{"float_bytes", report.floatBytes},
          {"int8_bytes", report.int8Bytes},
          {"ratio", report.sizeRatio}}},
        {"passed", report.passed}};
    if (report.benchmarked)
        doc["latency"] = {{"threads", report.threads},
                          {"warmup", report.warmup},
                          {"float", latencyJson(report.floatLatency)},
                          {"int8", latencyJson(report.int8Latency)},
                          {"speedup", report.speedup}};
    else
        doc["latency"] = nullptr;
    if (int4) {
        doc["settings"]["block_size"] = report.settings.blockSize;
        doc["settings"]["symmetric"] = report.settings.symmetric;
        doc["settings"]["accuracy_level"] = report.settings.accuracyLevel;
    }
    return doc;
}

std::string quantizationReportMarkdown(const QuantizationReport& report) {
    std::ostringstream md;
    md << "# Quantization report\n\n";
    md << "`" << report.floatModel << "` (float) against `" << report.int8Model << "` (int8)\n\n";
    std::string gate = "every output's SQNR >= " + format("%g dB", report.tolerance.minSqnrDb);
    if (report.tolerance.maxAbsError > 0)
        gate += format(" and max abs error <= %g", report.tolerance.maxAbsError);
    md << "**" << (report.passed ? "PASS" : "FAIL") << "**: " << gate << ".\n\n";
    if (report.settings.format == QuantizationFormat::Int4)
        md << "Settings: int4 weights (MatMulNBits, blocks of " << report.settings.blockSize
           << " along K, " << (report.settings.symmetric ? "symmetric" : "asymmetric")
           << ", accuracy_level " << report.settings.accuracyLevel << "), float activations";
    else
        md << "Settings: dynamic int8 weights (symmetric, "
           << (report.settings.perChannel ? "per output channel" : "per tensor")
           << "), uint8 activations";
    md << ", format " << quantizationFormatName(report.settings.format) << ", op types "
       << joined(report.settings.opTypes) << ", excluded: "
       << (report.settings.excludedNodes.empty() ? "none" : joined(report.settings.excludedNodes))
       << ".  \nInputs: " << joined(report.inputSets) << ".\n\n";

    md << "## Outputs\n\n";
    md << "| output | max abs error | mean abs error | cosine | SQNR | top-1 agreement | top-5 "
          "overlap | verdict |\n";
    md << "|---|---|---|---|---|---|---|---|\n";
    for (const auto& o : report.outputs) {
        md << "| " << o.name << " | " << format("%.4g", o.figures.maxAbsError) << " | "
           << format("%.4g", o.figures.meanAbsError) << " | " << format("%.6f", o.figures.cosine)
           << " | " << formatSqnr(o.figures.sqnrDb) << " | "
           << (o.logits ? format("%.1f%% of %lld rows", 100 * o.top1Agreement,
                                 static_cast<long long>(o.rows))
                        : "-")
           << " | " << (o.logits ? format("%.1f%%", 100 * o.top5Overlap) : "-") << " | "
           << (o.problem.empty() ? (o.passed ? "pass" : "fail") : "fail: " + o.problem) << " |\n";
    }
    md << "\n## Quantized nodes, weakest first\n\n";
    md << "The SQNR of each node's output against the float model's same tensor. Nodes near the "
          "top "
          "are the ones to `--exclude` first.\n\n";
    md << "| node | op type | output | SQNR | cosine | max abs error "
          "|\n|---|---|---|---|---|---|\n";
    for (const auto& n : report.nodes)
        md << "| " << n.name << " | " << n.opType << " | " << n.output << " | "
           << formatSqnr(n.figures.sqnrDb) << " | " << format("%.6f", n.figures.cosine) << " | "
           << format("%.4g", n.figures.maxAbsError) << " |\n";
    if (!report.skipped.empty()) {
        md << "\n## Skipped nodes\n\n| node | op type | reason |\n|---|---|---|\n";
        for (const auto& s : report.skipped)
            md << "| " << s.name << " | " << s.opType << " | " << s.reason << " |\n";
    }
    md << "\n## Size and latency\n\n| | float | int8 | float / int8 |\n|---|---|---|---|\n";
    md << "| file size | " << bytesText(report.floatBytes) << " | " << bytesText(report.int8Bytes)
       << " | " << format("%.2fx", report.sizeRatio) << " |\n";
    if (report.benchmarked) {
        md << "| median latency | " << format("%.3f ms", report.floatLatency.medianMs) << " | "
           << format("%.3f ms", report.int8Latency.medianMs) << " | "
           << format("%.2fx", report.speedup) << " |\n";
        md << "| min latency | " << format("%.3f ms", report.floatLatency.minMs) << " | "
           << format("%.3f ms", report.int8Latency.minMs) << " | "
           << format("%.2fx", report.int8Latency.minMs > 0
                                  ? report.floatLatency.minMs / report.int8Latency.minMs
                                  : 0.0)
           << " |\n";
        md << "\nThe engine's benchmark, " << report.threads << " threads, " << report.warmup
           << " warm-up and " << report.floatLatency.runs
           << " counted runs each, on the first input set.\n";
    } else {
        md << "\nLatency not measured.\n";
    }
    return md.str();
}

Status writeQuantizationReport(const QuantizationReport& report, const fs::path& folder) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return makeError(folder.string(), "cannot create the report folder: " + ec.message());
    if (auto st = writeFileAtomically(folder / "report.md", quantizationReportMarkdown(report));
        !st)
        return st;
    return writeFileAtomically(folder / "report.json",
                               quantizationReportJson(report).dump(2) + "\n");
}

}  // namespace onnxlens::engine
