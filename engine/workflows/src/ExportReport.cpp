#include "onnxlens/workflows/ExportReport.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ReportText.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/PytorchTimingServer.h"
#include "onnxlens/workflows/ReferenceComparison.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::engine {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

std::string describeBytes(std::uint64_t bytes) {
    if (bytes >= (1u << 20))
        return formatNumbers("%.1f MB", static_cast<double>(bytes) / (1 << 20));
    if (bytes >= (1u << 10))
        return formatNumbers("%.1f KB", static_cast<double>(bytes) / (1 << 10));
    return std::to_string(bytes) + " bytes";
}

// A number in a JSON document that may be absent or of another type.
double numberOr(const Json& doc, const char* key, double fallback) {
    auto it = doc.find(key);
    return (it != doc.end() && it->is_number()) ? it->get<double>() : fallback;
}

std::string stringOr(const Json& doc, const char* key) {
    auto it = doc.find(key);
    return (it != doc.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

LatencyStatistics latencyFromJson(const Json& doc) {
    LatencyStatistics s;
    if (!doc.is_object()) return s;
    s.runs = static_cast<int>(numberOr(doc, "runs", 0));
    s.minMs = numberOr(doc, "min_ms", 0);
    s.meanMs = numberOr(doc, "mean_ms", 0);
    s.medianMs = numberOr(doc, "median_ms", 0);
    s.p10Ms = numberOr(doc, "p10_ms", s.minMs);
    s.p90Ms = numberOr(doc, "p90_ms", 0);
    s.p99Ms = numberOr(doc, "p99_ms", 0);
    s.maxMs = numberOr(doc, "max_ms", 0);
    s.stddevMs = numberOr(doc, "stddev_ms", 0);
    return s;
}

Json latencyToJson(const LatencyStatistics& s) {
    return {{"runs", s.runs},          {"min_ms", s.minMs},
            {"mean_ms", s.meanMs},     {"p10_ms", s.p10Ms},
            {"median_ms", s.medianMs}, {"p90_ms", s.p90Ms},
            {"p99_ms", s.p99Ms},       {"max_ms", s.maxMs},
            {"stddev_ms", s.stddevMs}, {"coefficient_of_variation", s.coefficientOfVariation()}};
}

struct CancelledError {};

void checkCancel(const std::atomic<bool>* cancel) {
    if (cancel && cancel->load()) throw CancelledError{};
}

// Runs one data set and compares every output with PyTorch's (the rule of `compare`).
DataSetAgreement runDataSet(Session& session, const TestDataSet& set, const Tolerance& tolerance,
                            const std::atomic<bool>* cancel) {
    DataSetAgreement agreement;
    agreement.name = set.directory.filename().string();
    auto feeds = feedsFromTestDataSet(session, set);
    if (!feeds) {
        agreement.problem = feeds.error().message;
        return agreement;
    }
    const Value& first = feeds->at(session.inputs().front().name);
    if (first.isTensor() && first.tensor().rank() > 0) agreement.batch = first.tensor().dim(0);
    checkCancel(cancel);
    RunControl control;
    auto outputs = session.run(*feeds, &control);
    if (!outputs) {
        agreement.problem = outputs.error().message;
        return agreement;
    }
    ComparisonResult total;
    total.passed = true;
    for (std::size_t i = 0; i < set.outputFiles.size(); ++i) {
        const std::string& name = set.outputNames[i];
        auto it = std::find_if(session.outputs().begin(), session.outputs().end(),
                               [&](const Session::IoInfo& o) { return o.name == name; });
        if (it == session.outputs().end()) {
            agreement.problem = "the model has no output named '" + name + "'";
            return agreement;
        }
        auto expected = readValueFile(set.outputFiles[i], &it->type);
        if (!expected) {
            agreement.problem = expected.error().message;
            return agreement;
        }
        const auto k = static_cast<std::size_t>(it - session.outputs().begin());
        const ComparisonResult r = compareValues((*outputs)[k], *expected, tolerance);
        if (r.elementCount == 0 && !r.problem.empty()) {
            agreement.problem = name + ": " + r.problem;
            return agreement;
        }
        // NaN in one side and not the other makes the error infinite rather than hiding it.
        total.maxAbsError =
            std::max(total.maxAbsError, std::isnan(r.maxAbsError) ? INFINITY : r.maxAbsError);
        total.maxRelError = std::max(total.maxRelError, r.maxRelError);
        total.cosineSimilarity = std::min(total.cosineSimilarity, r.cosineSimilarity);
        total.outsideCount += r.outsideCount;
        total.elementCount += r.elementCount;
        total.floating = total.floating || r.floating;
        total.passed = total.passed && r.passed;
        if (agreement.warning.empty()) {
            const std::string warning = uninformativeReferenceWarning(r, tolerance);
            if (!warning.empty())
                agreement.warning = (set.outputFiles.size() > 1 ? name + ": " : "") + warning;
        }
    }
    agreement.maxAbsError = total.maxAbsError;
    agreement.maxRelError = total.maxRelError;
    agreement.minCosineSimilarity = total.cosineSimilarity;
    agreement.outsideCount = total.outsideCount;
    agreement.elementCount = total.elementCount;
    agreement.withinTolerance = total.passed;
    agreement.agreement = describeAgreement(total, tolerance);
    return agreement;
}

ExportReportLine agreementLine(const std::string& key, const std::string& title,
                               const DataSetAgreement& a) {
    ExportReportLine line{key, title, ReportStatus::Failed, {}};
    if (!a.problem.empty()) {
        line.figure = a.problem;
        return line;
    }
    line.status = !a.withinTolerance  ? ReportStatus::Failed
                  : a.warning.empty() ? ReportStatus::Passed
                                      : ReportStatus::Warning;
    line.figure =
        (key == "dynamic_batch" ? "batch " + std::to_string(a.batch) + ": " : std::string()) +
        a.agreement;
    if (!a.warning.empty()) line.figure += "; " + a.warning;
    return line;
}

LatencyStatistics timeEngine(Session& session, const std::map<std::string, Value>& feeds,
                             int warmup, int runs, const std::atomic<bool>* cancel,
                             std::string& problem) {
    RunControl control;
    std::vector<double> samples;
    for (int i = 0; i < warmup + runs; ++i) {
        checkCancel(cancel);
        const auto start = std::chrono::steady_clock::now();
        auto r = session.run(feeds, &control);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (!r) {
            problem = r.error().message;
            return {};
        }
        if (i >= warmup) samples.push_back(ms);
    }
    return computeLatencyStatistics(samples);
}

}  // namespace

void concludeExportReport(ExportReport& report) {
    report.passed =
        std::none_of(report.lines.begin(), report.lines.end(),
                     [](const ExportReportLine& l) { return l.status == ReportStatus::Failed; });
}

const char* reportStatusName(ReportStatus status) {
    switch (status) {
        case ReportStatus::Passed:
            return "pass";
        case ReportStatus::Failed:
            return "fail";
        case ReportStatus::Skipped:
            return "skip";
        case ReportStatus::Warning:
            return "warn";
    }
    return "fail";
}

Result<ExportReport> validateExport(const fs::path& folder, const ExportReportOptions& options,
                                    const ExportReportProgress& progress,
                                    const std::atomic<bool>* cancel) {
    const auto say = [&](const std::string& text) {
        if (progress) progress(text);
    };
    ExportReport report;
    report.folder = folder;
    const fs::path exportJson = folder / "export.json";
    Json exported;
    {
        std::ifstream in(exportJson, std::ios::binary);
        if (!in)
            return makeError(exportJson.string(), "cannot be read (is this an export folder?)");
        exported = Json::parse(in, nullptr, false);
        if (exported.is_discarded() || !exported.is_object())
            return makeError(exportJson.string(), "is not a JSON object");
    }
    report.opset = static_cast<int>(numberOr(exported, "opset", 0));
    report.torchVersion = stringOr(exported, "torch_version");
    report.onnxVersion = stringOr(exported, "onnx_version");
    report.exportSeconds = numberOr(exported, "export_seconds", 0);
    if (auto source = exported.find("source"); source != exported.end() && source->is_object()) {
        report.sourceKind = stringOr(*source, "kind");
        report.sourceName = stringOr(*source, "name");
    }
    if (auto latency = exported.find("pytorch_latency"); latency != exported.end()) {
        report.pytorchLatency = latencyFromJson(*latency);
        if (latency->is_object())
            report.pytorchThreads = static_cast<int>(numberOr(*latency, "threads", 0));
    }

    try {
        // 1. The file loads.
        const fs::path modelPath = folder / "model.onnx";
        say("loading " + modelPath.string());
        auto model = loadModel(modelPath);
        ExportReportLine exportedLine{"exported", "Exported", ReportStatus::Failed, {}};
        if (!model) {
            exportedLine.figure = model.error().message;
            report.lines.push_back(exportedLine);
            for (const auto& [key, title] : {std::pair{"checker", "ONNX checker passed"},
                                             {"numbers", "Numbers match PyTorch"},
                                             {"dynamic_batch", "Dynamic batch works"},
                                             {"latency", "Latency against PyTorch"}})
                report.lines.push_back(
                    {key, title, ReportStatus::Skipped, "the model did not load"});
            concludeExportReport(report);
            return report;
        }
        report.modelBytes = model->fileBytes;
        exportedLine.status = ReportStatus::Passed;
        exportedLine.figure = "opset " + std::to_string(report.opset) + ", " +
                              describeBytes(report.modelBytes) +
                              (report.torchVersion.empty() ? "" : ", torch " + report.torchVersion);
        report.lines.push_back(exportedLine);

        // 2. The onnx checker.
        checkCancel(cancel);
        say("running the onnx checker");
        const CheckerVerdict checker = runChecker(*model->proto);
        report.lines.push_back({"checker", "ONNX checker passed",
                                checker.ok ? ReportStatus::Passed : ReportStatus::Failed,
                                checker.ok ? "no errors" : checker.message});

        // 3. The engine against PyTorch's outputs, on each data set.
        checkCancel(cancel);
        say("compiling the model for the engine");
        SessionOptions sessionOptions;
        sessionOptions.threads = options.threads;
        // The figures must come out the same when rerun at this thread count.
        sessionOptions.adaptThreadsToLoad = false;
        auto session = Session::create(*model, sessionOptions);
        auto found = discoverTestDataSets(modelPath, *model->proto);
        std::string setupProblem;
        if (!session)
            setupProblem = session.error().message;
        else if (!found)
            setupProblem = found.error().message;
        else if (found->empty())
            setupProblem = "no test_data_set_* folder beside the model";
        if (!setupProblem.empty()) {
            report.lines.push_back(
                {"numbers", "Numbers match PyTorch", ReportStatus::Failed, setupProblem});
            report.lines.push_back(
                {"dynamic_batch", "Dynamic batch works", ReportStatus::Skipped, setupProblem});
            report.lines.push_back(
                {"latency", "Latency against PyTorch", ReportStatus::Skipped, setupProblem});
            concludeExportReport(report);
            return report;
        }
        report.engineThreads = (*session)->threads();
        const Tolerance tolerance{options.rtol, options.maxAbsErrorThreshold};
        for (const auto& set : *found) {
            checkCancel(cancel);
            say("running " + set.directory.filename().string());
            report.dataSets.push_back(runDataSet(**session, set, tolerance, cancel));
        }
        report.lines.push_back(
            agreementLine("numbers", "Numbers match PyTorch", report.dataSets.front()));

        // 4. Dynamic batch: the second data set has twice the batch of the first.
        const bool dynamicBatch = exported.value("dynamic_batch", false);
        if (report.dataSets.size() >= 2) {
            report.lines.push_back(
                agreementLine("dynamic_batch", "Dynamic batch works", report.dataSets[1]));
        } else {
            report.lines.push_back(
                {"dynamic_batch", "Dynamic batch works",
                 dynamicBatch ? ReportStatus::Failed : ReportStatus::Skipped,
                 dynamicBatch
                     ? "export.json promises a dynamic batch but test_data_set_1 is missing"
                     : "exported with static shapes"});
        }

        // 5. Latency, with PyTorch's warm-up and runs unless told otherwise.
        ExportReportLine latencyLine{
            "latency", "Latency against PyTorch", ReportStatus::Skipped, {}};
        if (!options.benchmark) {
            latencyLine.figure = "not measured (no benchmark requested)";
        } else if (!report.dataSets.front().problem.empty()) {
            latencyLine.status = ReportStatus::Failed;
            latencyLine.figure = "the engine cannot run the model";
        } else {
            const int warmup =
                options.warmup >= 0
                    ? options.warmup
                    : static_cast<int>(numberOr(exported["pytorch_latency"], "warmup", 2));
            const int runs =
                options.runs > 0 ? options.runs : std::max(1, report.pytorchLatency.runs);
            auto feeds = feedsFromTestDataSet(**session, found->front());
            std::string problem;
            if (!feeds) problem = feeds.error().message;
            // PyTorch interleaved with the engine when the exporter can serve timing rounds.
            std::unique_ptr<PytorchTimingServer> server;
            std::string serverProblem = "no exporter script given";
            if (problem.empty() && !options.python.empty() && !options.exporterScript.empty()) {
                say("starting PyTorch for interleaved timing");
                auto started = PytorchTimingServer::start(options.python, options.exporterScript,
                                                          folder, options.threads);
                if (started)
                    server = std::move(*started);
                else
                    serverProblem = started.error().message;
            }
            RunControl control;
            const TimedRun engineRun = [&]() -> Result<double> {
                const auto start = std::chrono::steady_clock::now();
                auto r = (*session)->run(*feeds, &control);
                if (!r) return r.error();
                return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                 start)
                    .count();
            };
            if (problem.empty() && server) {
                say("timing the engine and PyTorch in turn: " + std::to_string(warmup) +
                    " warm-up, " + std::to_string(runs) + " runs each");
                auto timed = timeInterleaved(
                    engineRun, [&] { return server->run(); }, warmup, runs,
                    [&] { return cancel && cancel->load(); }, "the engine", "PyTorch");
                if (!timed && cancel && cancel->load()) throw CancelledError{};
                if (timed) {
                    report.latency = *timed;
                    report.engineLatency = timed->a;
                    report.pytorchLatency = timed->b;
                    report.pytorchThreads =
                        options.threads > 0 ? options.threads : report.pytorchThreads;
                    report.pytorchTiming =
                        "interleaved with the engine (engine, PyTorch, engine, ...)";
                } else {
                    serverProblem = timed.error().message;
                    server.reset();
                }
            }
            if (problem.empty() && !server) {
                say("timing the engine: " + std::to_string(warmup) + " warm-up, " +
                    std::to_string(runs) + " runs");
                report.engineLatency = timeEngine(**session, *feeds, warmup, runs, cancel, problem);
                report.latency = compareLatencies(report.engineLatency, report.pytorchLatency,
                                                  false, "the engine", "PyTorch");
                report.pytorchTiming = "at export time, not interleaved (" + serverProblem + ")";
            }
            if (!problem.empty()) {
                latencyLine.status = ReportStatus::Failed;
                latencyLine.figure = problem;
            } else {
                report.hasEngineLatency = true;
                const double torchMedian = report.pytorchLatency.medianMs;
                report.latencyRatio = report.latency.ratio;
                latencyLine.figure =
                    formatNumbers("engine median %.3f ms (P10-P90 %.3f-%.3f",
                                  report.engineLatency.medianMs, report.engineLatency.p10Ms,
                                  report.engineLatency.p90Ms) +
                    formatNumbers(" ms, %.0f threads), ", report.engineThreads) +
                    formatNumbers("PyTorch median %.3f ms (P10-P90 %.3f-%.3f", torchMedian,
                                  report.pytorchLatency.p10Ms, report.pytorchLatency.p90Ms) +
                    formatNumbers(" ms, %.0f threads)", report.pytorchThreads);
                if (torchMedian > 0)
                    latencyLine.figure += formatNumbers(", ratio %.3gx", report.latencyRatio);
                latencyLine.figure += report.latency.interleaved ? ", timed interleaved"
                                                                 : ", PyTorch timed at export";
                const bool tooSlow =
                    options.maxLatencyRatio > 0 && report.latencyRatio > options.maxLatencyRatio;
                latencyLine.status = tooSlow || torchMedian <= 0 ? ReportStatus::Failed
                                     : report.latency.busy       ? ReportStatus::Warning
                                                                 : ReportStatus::Passed;
                if (!report.latency.note.empty()) latencyLine.figure += "; " + report.latency.note;
                if (tooSlow)
                    latencyLine.figure += formatNumbers(" (limit %.2fx)", options.maxLatencyRatio);
                if (torchMedian <= 0) latencyLine.figure += " (export.json has no PyTorch latency)";
            }
        }
        report.lines.push_back(latencyLine);

        // 6. Module by module against PyTorch: recorded at export, or now when the numbers differ.
        const bool mismatch = std::any_of(
            report.lines.begin(), report.lines.end(),
            [](const auto& l) { return l.key == "numbers" && l.status == ReportStatus::Failed; });
        std::string recordProblem;
        bool recorded = hasModuleRecords(folder);
        if (!recorded && mismatch && options.recordModulesOnMismatch && !options.python.empty() &&
            !options.exporterScript.empty()) {
            checkCancel(cancel);
            say("recording the output of each PyTorch module");
            auto server = PytorchTimingServer::start(options.python, options.exporterScript, folder,
                                                     options.threads);
            if (!server) {
                recordProblem = server.error().message;
            } else if (auto mapped = (*server)->recordModules(); !mapped) {
                recordProblem = mapped.error().message;
            } else {
                recorded = hasModuleRecords(folder);
            }
        }
        if (recorded) {
            checkCancel(cancel);
            (*session).reset();  // the comparison compiles its own session, optimizer off
            say("comparing each PyTorch module with the ONNX value of its scope");
            auto modules = compareModules(folder, tolerance, options.threads, cancel);
            if (cancel && cancel->load()) throw CancelledError{};
            ExportReportLine line{"modules", "Modules against PyTorch", ReportStatus::Failed, {}};
            if (!modules) {
                line.figure = modules.error().message;
                line.status = ReportStatus::Warning;
            } else {
                report.modulesCompared = true;
                report.modules = std::move(*modules);
                line.figure = moduleComparisonFigure(report.modules);
                line.status = report.modules.firstDivergence < 0 ? ReportStatus::Passed
                              : mismatch                         ? ReportStatus::Failed
                                                                 : ReportStatus::Warning;
                if (report.modules.compared == 0) line.status = ReportStatus::Warning;
            }
            report.lines.push_back(line);
        } else if (!recordProblem.empty()) {
            report.lines.push_back({"modules", "Modules against PyTorch", ReportStatus::Warning,
                                    "could not record PyTorch's modules: " + recordProblem});
        }
        if (options.quantize) addQuantizedExportLines(report, options, progress, cancel);
    } catch (const CancelledError&) {
        return makeError(folder.string(), "cancelled");
    }
    concludeExportReport(report);
    return report;
}

std::string exportReportMarkdown(const ExportReport& report) {
    std::ostringstream md;
    md << "# Export report: "
       << (report.sourceName.empty() ? report.folder.filename().string() : report.sourceName)
       << "\n\n";
    md << "Folder: `" << report.folder.string() << "`";
    if (!report.torchVersion.empty()) md << ", torch " << report.torchVersion;
    if (!report.onnxVersion.empty()) md << ", onnx " << report.onnxVersion;
    md << "\n\n| | check | result |\n|---|---|---|\n";
    for (const auto& line : report.lines) {
        const char* mark = line.status == ReportStatus::Passed    ? "PASS"
                           : line.status == ReportStatus::Failed  ? "FAIL"
                           : line.status == ReportStatus::Warning ? "WARN"
                                                                  : "skip";
        std::string figure = line.figure;
        std::replace(figure.begin(), figure.end(), '\n', ' ');
        std::string escaped;
        for (char c : figure) escaped += (c == '|') ? std::string("\\|") : std::string(1, c);
        md << "| " << mark << " | " << line.title << " | " << escaped << " |\n";
    }
    md << "\n" << (report.passed ? "Every check passed." : "At least one check FAILED.") << "\n";
    if (report.hasEngineLatency) {
        const auto& e = report.engineLatency;
        const auto& p = report.pytorchLatency;
        md << "\n## Latency (ms)\n\nPyTorch timed " << report.pytorchTiming << ".";
        if (!report.latency.note.empty()) md << " " << report.latency.note << ".";
        md << "\n\n| | runs | min | P10 | median | P90 | max | mean | CV |"
              "\n|---|---|---|---|---|---|---|---|---|\n";
        for (const auto& [name, s] : {std::pair{"onnxlens engine", &e}, std::pair{"PyTorch", &p}})
            md << "| " << name << formatNumbers(" | %.0f | %.3f ", s->runs, s->minMs)
               << formatNumbers("| %.3f | %.3f | %.3f ", s->p10Ms, s->medianMs, s->p90Ms)
               << formatNumbers("| %.3f | %.3f | %.0f%% |\n", s->maxMs, s->meanMs,
                                100 * s->coefficientOfVariation());
        md << formatNumbers("\nRatio engine / PyTorch (medians): %.3gx", report.latencyRatio)
           << (report.latency.withinNoise ? " (within noise)" : "")
           << (report.latency.busy ? " (the machine was busy: rerun)" : "") << "\n";
    }
    if (report.modulesCompared) md << moduleComparisonMarkdown(report.modules);
    return md.str();
}

std::string exportReportJson(const ExportReport& report) {
    Json lines = Json::array();
    for (const auto& l : report.lines)
        lines.push_back({{"key", l.key},
                         {"title", l.title},
                         {"status", reportStatusName(l.status)},
                         {"figure", l.figure}});
    Json sets = Json::array();
    for (const auto& s : report.dataSets) {
        Json set = {{"name", s.name}, {"batch", s.batch}};
        if (s.problem.empty()) {
            set["max_abs_error"] = s.maxAbsError;
            set["max_rel_error"] = s.maxRelError;
            set["cosine_similarity"] = s.minCosineSimilarity;
            set["outside_count"] = s.outsideCount;
            set["element_count"] = s.elementCount;
            set["within_tolerance"] = s.withinTolerance;
            if (!s.warning.empty()) set["warning"] = s.warning;
        } else {
            set["problem"] = s.problem;
        }
        sets.push_back(set);
    }
    Json doc = {{"folder", report.folder.string()},
                {"passed", report.passed},
                {"lines", lines},
                {"source", {{"kind", report.sourceKind}, {"name", report.sourceName}}},
                {"torch_version", report.torchVersion},
                {"onnx_version", report.onnxVersion},
                {"opset", report.opset},
                {"model_bytes", report.modelBytes},
                {"export_seconds", report.exportSeconds},
                {"data_sets", sets},
                {"pytorch_latency", latencyToJson(report.pytorchLatency)}};
    if (report.hasEngineLatency) {
        doc["engine_latency"] = latencyToJson(report.engineLatency);
        doc["engine_threads"] = report.engineThreads;
        doc["pytorch_threads"] = report.pytorchThreads;
        doc["latency_ratio"] = report.latencyRatio;
        doc["latency_interleaved"] = report.latency.interleaved;
        doc["latency_within_noise"] = report.latency.withinNoise;
        doc["latency_busy"] = report.latency.busy;
        doc["latency_note"] = report.latency.note;
        doc["pytorch_timing"] = report.pytorchTiming;
    }
    if (report.quantized) {
        const auto& q = report.int8;
        doc["int8"] = {{"model", q.model.string()},
                       {"bytes", q.bytes},
                       {"size_ratio", q.sizeRatio},
                       {"quantized", q.quantizedPerOpType},
                       {"max_abs_error", q.maxAbsError},
                       {"cosine", q.cosine},
                       {"sqnr_db", std::isfinite(q.sqnrDb) ? Json(q.sqnrDb) : Json("inf")},
                       {"problem", q.problem}};
        if (q.hasLatency) {
            doc["int8"]["engine_latency"] = latencyToJson(q.latency);
            doc["int8"]["speedup"] = q.speedup;
        }
    }
    if (report.modulesCompared) doc["modules"] = moduleComparisonJson(report.modules);
    return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status writeExportReport(const ExportReport& report) {
    for (const auto& [name, text] : {std::pair{"report.md", exportReportMarkdown(report)},
                                     std::pair{"report.json", exportReportJson(report)}}) {
        const fs::path file = report.folder / name;
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) return makeError(file.string(), "cannot be written");
    }
    return Ok{};
}

}  // namespace onnxlens::engine
