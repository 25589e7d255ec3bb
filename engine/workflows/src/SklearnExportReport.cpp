#include "onnxlens/workflows/SklearnExportReport.h"

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
#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/ReferenceComparison.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::engine {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

struct Cancelled {};

Result<Json> readExportJson(const fs::path& folder) {
    const fs::path file = folder / "export.json";
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError(file.string(), "cannot be read (is this an export folder?)");
    Json doc = Json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return makeError(file.string(), "is not a JSON object");
    return doc;
}

std::int64_t countLabelMismatches(const Tensor& actual, const Tensor& expected) {
    if (actual.dtype() != expected.dtype() || actual.numel() != expected.numel()) return -1;
    std::int64_t mismatches = 0;
    if (actual.dtype() == DataType::String) {
        for (std::int64_t i = 0; i < actual.numel(); ++i)
            mismatches += actual.data<std::string>()[i] != expected.data<std::string>()[i];
    } else {
        for (std::int64_t i = 0; i < actual.numel(); ++i)
            mismatches += actual.valueAsInt64(i) != expected.valueAsInt64(i);
    }
    return mismatches;
}

// The first input's rows repeated (or cut) to `batch` rows.
Tensor tileRows(const Tensor& x, std::int64_t batch) {
    const std::int64_t rows = x.rank() > 0 ? x.dim(0) : 1;
    const std::int64_t width = rows > 0 ? x.numel() / rows : 0;
    Shape shape = x.shape();
    shape[0] = batch;
    Tensor out(x.dtype(), shape);
    dispatchBySize(x.dtype(), [&]<class T>() {
        const T* in = static_cast<const T*>(x.raw());
        T* o = static_cast<T*>(out.raw());
        for (std::int64_t r = 0; r < batch; ++r)
            for (std::int64_t f = 0; f < width; ++f) o[r * width + f] = in[(r % rows) * width + f];
    });
    return out;
}

double engineMedianMs(Session& session, const std::map<std::string, Value>& feeds, int warmup,
                      int runs, const std::atomic<bool>* cancel, std::string& problem) {
    RunControl control;
    std::vector<double> samples;
    for (int i = 0; i < warmup + runs; ++i) {
        if (cancel && cancel->load()) throw Cancelled{};
        const auto start = std::chrono::steady_clock::now();
        auto r = session.run(feeds, &control);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (!r) {
            problem = r.error().message;
            return 0;
        }
        if (i >= warmup) samples.push_back(ms);
    }
    return computeLatencyStatistics(samples).medianMs;
}

}  // namespace

bool isSklearnExport(const fs::path& folder) {
    auto doc = readExportJson(folder);
    if (!doc) return false;
    auto source = doc->find("source");
    return source != doc->end() && source->is_object() && source->value("kind", "") == "sklearn";
}

Result<SklearnExportReport> validateSklearnExport(const fs::path& folder,
                                                  const SklearnExportOptions& options,
                                                  const ExportReportProgress& progress,
                                                  const std::atomic<bool>* cancel) {
    const auto say = [&](const std::string& text) {
        if (progress) progress(text);
    };
    auto exported = readExportJson(folder);
    if (!exported) return exported.error();
    SklearnExportReport s;
    ExportReport& report = s.report;
    report.folder = folder;
    report.sourceKind = "sklearn";
    report.opset = exported->value("opset", 0);
    report.onnxVersion = exported->value("onnx_version", "");
    report.exportSeconds = exported->value("export_seconds", 0.0);
    if (auto source = exported->find("source"); source != exported->end() && source->is_object())
        report.sourceName = source->value("name", "");
    s.estimator = exported->value("estimator", "");
    s.sklearnVersion = exported->value("sklearn_version", "");
    if (auto c = exported->find("converted"); c != exported->end() && c->is_array())
        for (const auto& name : *c)
            if (name.is_string()) s.converted.push_back(name.get<std::string>());

    const char* valuesTitle = "Probabilities match scikit-learn";
    auto skipRest = [&](const std::string& why,
                        std::initializer_list<std::pair<const char*, const char*>> rest) {
        for (const auto& [key, title] : rest)
            report.lines.push_back({key, title, ReportStatus::Skipped, why});
    };
    try {
        const fs::path modelPath = folder / "model.onnx";
        say("loading " + modelPath.string());
        auto model = loadModel(modelPath);
        if (!model) {
            report.lines.push_back(
                {"exported", "Exported", ReportStatus::Failed, model.error().message});
            skipRest("the model did not load", {{"checker", "ONNX checker passed"},
                                                {"labels", "Labels match scikit-learn"},
                                                {"probabilities", valuesTitle},
                                                {"throughput", "Throughput against scikit-learn"}});
            concludeExportReport(report);
            return s;
        }
        report.modelBytes = model->fileBytes;
        std::string convertedList;
        for (const auto& c : s.converted) convertedList += (convertedList.empty() ? "" : " + ") + c;
        report.lines.push_back(
            {"exported", "Exported", ReportStatus::Passed,
             (convertedList.empty() ? s.estimator : convertedList) +
                 (s.sklearnVersion.empty() ? "" : ", scikit-learn " + s.sklearnVersion)});

        say("running the onnx checker");
        const CheckerVerdict checker = runChecker(*model->proto);
        report.lines.push_back({"checker", "ONNX checker passed",
                                checker.ok ? ReportStatus::Passed : ReportStatus::Failed,
                                checker.ok ? "no errors" : checker.message});

        say("compiling the model for the engine");
        SessionOptions sessionOptions;
        sessionOptions.threads = options.threads;
        // The figures must come out the same when rerun at this thread count.
        sessionOptions.adaptThreadsToLoad = false;
        auto session = Session::create(*model, sessionOptions);
        auto found = discoverTestDataSets(modelPath, *model->proto);
        std::string setup = !session         ? session.error().message
                            : !found         ? found.error().message
                            : found->empty() ? "no test_data_set_0 beside the model"
                                             : "";
        std::map<std::string, Value> feeds;
        std::vector<Value> actual;
        if (setup.empty()) {
            auto f = feedsFromTestDataSet(**session, found->front());
            if (!f)
                setup = f.error().message;
            else
                feeds = std::move(*f);
        }
        if (setup.empty()) {
            say("running " + found->front().directory.filename().string());
            RunControl control;
            auto out = (*session)->run(feeds, &control);
            if (!out)
                setup = out.error().message;
            else
                actual = std::move(*out);
        }
        if (!setup.empty()) {
            report.lines.push_back(
                {"labels", "Labels match scikit-learn", ReportStatus::Failed, setup});
            skipRest(setup, {{"probabilities", valuesTitle},
                             {"throughput", "Throughput against scikit-learn"}});
            concludeExportReport(report);
            return s;
        }
        const auto& set = found->front();
        const auto& outputs = (*session)->outputs();
        ExportReportLine labels{"labels", "Labels match scikit-learn", ReportStatus::Skipped,
                                "a regressor has no labels"};
        ExportReportLine values{"probabilities", valuesTitle, ReportStatus::Skipped,
                                "no probabilities to compare"};
        for (std::size_t i = 0; i < set.outputFiles.size(); ++i) {
            auto it = std::find_if(outputs.begin(), outputs.end(),
                                   [&](const auto& o) { return o.name == set.outputNames[i]; });
            if (it == outputs.end()) continue;
            const Value& got = actual[static_cast<std::size_t>(it - outputs.begin())];
            auto expected = readValueFile(set.outputFiles[i], &it->type);
            if (it->name == "label") {
                if (!expected) {
                    labels = {"labels", labels.title, ReportStatus::Failed,
                              expected.error().message};
                    continue;
                }
                s.rows = expected->isTensor() ? expected->tensor().numel() : 0;
                s.labelMismatches = got.isTensor() && expected->isTensor()
                                        ? countLabelMismatches(got.tensor(), expected->tensor())
                                        : -1;
                labels.status =
                    s.labelMismatches == 0 ? ReportStatus::Passed : ReportStatus::Failed;
                labels.figure = s.labelMismatches < 0
                                    ? "the labels differ in type or count"
                                    : std::to_string(s.rows - s.labelMismatches) + " of " +
                                          std::to_string(s.rows) + " rows equal";
                continue;
            }
            const bool regression = it->name == "variable";
            values.title = regression ? "Values match scikit-learn" : valuesTitle;
            if (!expected) {
                values.status = ReportStatus::Failed;
                values.figure = expected.error().message;
                continue;
            }
            // Probabilities: absolute; regression values: relative as well, as float32 holds them.
            const Tolerance tolerance{regression ? options.probabilityTolerance : 0.0,
                                      options.probabilityTolerance};
            const ComparisonResult r = compareValues(got, *expected, tolerance);
            s.maxProbabilityError = r.maxAbsError;
            values.status = r.passed ? ReportStatus::Passed : ReportStatus::Failed;
            values.figure =
                r.passed || r.elementCount > 0
                    ? formatNumbers(
                          regression ? "max abs error %.3g (tolerance %.0e + %.0e x |value|)"
                                     : "max abs error %.3g (tolerance %.0e)",
                          r.maxAbsError, options.probabilityTolerance, options.probabilityTolerance)
                    : r.problem;
            if (!r.passed && r.elementCount > 0) values.figure += ": " + r.problem;
        }
        report.lines.push_back(labels);
        report.lines.push_back(values);

        ExportReportLine throughput{"throughput", "Throughput against scikit-learn",
                                    ReportStatus::Skipped, "not measured (no benchmark requested)"};
        if (options.benchmark) {
            std::map<std::int64_t, Json> sklearn;
            if (auto t = exported->find("sklearn_throughput");
                t != exported->end() && t->is_array())
                for (const auto& e : *t)
                    if (e.is_object()) sklearn[e.value("batch", std::int64_t{0})] = e;
            const std::string inputName = (*session)->inputs().front().name;
            const Value& x = feeds.at(inputName);
            std::string problem;
            std::string figure;
            for (std::int64_t batch : {std::int64_t{1}, std::int64_t{1000}}) {
                say("timing the engine at batch " + std::to_string(batch));
                std::map<std::string, Value> tiled = feeds;
                tiled[inputName] = tileRows(x.tensor(), batch);
                SklearnThroughput t;
                t.batch = batch;
                t.engineMedianMs =
                    engineMedianMs(**session, tiled, options.warmup, options.runs, cancel, problem);
                if (!problem.empty()) break;
                t.engineRowsPerSecond = t.engineMedianMs > 0
                                            ? static_cast<double>(batch) * 1000.0 / t.engineMedianMs
                                            : 0;
                if (auto it = sklearn.find(batch); it != sklearn.end()) {
                    t.sklearnMedianMs = it->second.value("median_ms", 0.0);
                    t.sklearnRowsPerSecond = it->second.value("rows_per_second", 0.0);
                }
                s.throughput.push_back(t);
                figure += (figure.empty() ? "" : "; ") +
                          formatNumbers("batch %.0f: engine %.0f rows/s",
                                        static_cast<double>(batch), t.engineRowsPerSecond);
                if (t.sklearnRowsPerSecond > 0)
                    figure +=
                        formatNumbers(", scikit-learn %.0f rows/s (%.2fx)", t.sklearnRowsPerSecond,
                                      t.engineRowsPerSecond / t.sklearnRowsPerSecond);
            }
            throughput.status = problem.empty() ? ReportStatus::Passed : ReportStatus::Failed;
            throughput.figure = problem.empty() ? figure : problem;
            if (problem.empty() && sklearn.empty())
                throughput.figure += " (export.json has no scikit-learn timing)";
        }
        report.lines.push_back(throughput);
    } catch (const Cancelled&) {
        return makeError(folder.string(), "cancelled");
    }
    concludeExportReport(report);
    return s;
}

std::string sklearnExportReportMarkdown(const SklearnExportReport& s) {
    std::ostringstream md;
    md << exportReportMarkdown(s.report);
    if (!s.throughput.empty()) {
        md << "\n## Throughput (rows per second)\n\n| batch | onnxlens engine | scikit-learn | "
              "engine / scikit-learn |\n"
              "|---|---|---|---|\n";
        for (const auto& t : s.throughput)
            md << formatNumbers("| %.0f | %.0f | %.0f ", static_cast<double>(t.batch),
                                t.engineRowsPerSecond, t.sklearnRowsPerSecond)
               << (t.sklearnRowsPerSecond > 0
                       ? formatNumbers("| %.2fx |\n",
                                       t.engineRowsPerSecond / t.sklearnRowsPerSecond)
                       : std::string("| - |\n"));
    }
    return md.str();
}

std::string sklearnExportReportJson(const SklearnExportReport& s) {
    Json doc = Json::parse(exportReportJson(s.report));
    doc.erase("pytorch_latency");
    doc.erase("torch_version");
    doc["estimator"] = s.estimator;
    doc["sklearn_version"] = s.sklearnVersion;
    doc["converted"] = s.converted;
    doc["rows"] = s.rows;
    doc["label_mismatches"] = s.labelMismatches;
    doc["max_probability_error"] = s.maxProbabilityError;
    Json throughput = Json::array();
    for (const auto& t : s.throughput)
        throughput.push_back({{"batch", t.batch},
                              {"engine_rows_per_second", t.engineRowsPerSecond},
                              {"engine_median_ms", t.engineMedianMs},
                              {"sklearn_rows_per_second", t.sklearnRowsPerSecond},
                              {"sklearn_median_ms", t.sklearnMedianMs}});
    doc["throughput"] = throughput;
    return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status writeSklearnExportReport(const SklearnExportReport& s) {
    for (const auto& [name, text] : {std::pair{"report.md", sklearnExportReportMarkdown(s)},
                                     std::pair{"report.json", sklearnExportReportJson(s)}}) {
        const fs::path file = s.report.folder / name;
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) return makeError(file.string(), "cannot be written");
    }
    return Ok{};
}

}  // namespace onnxlens::engine
