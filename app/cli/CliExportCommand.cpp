// onnxlens-cli export: the PyTorch exporter as a subprocess with a time limit, then the engine's
// validation of what it wrote (ExportReport), saved as report.md and report.json beside the model.
// Exit 0 when every gate passes, 1 when one fails, 2 when the export itself could not be done.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "ChildProcess.h"
#include "CliCommon.h"
#include "onnxlens/workflows/ExportReport.h"
#include "onnxlens/workflows/ExporterCommand.h"
#include "onnxlens/workflows/SklearnExportReport.h"

namespace onnxlens::cli {

namespace {

namespace fs = std::filesystem;

const char* kUsage =
    "onnxlens-cli export (--torchvision NAME | --script FILE | --torchscript FILE --input-shape S "
    "| "
    "--sklearn PIPELINE.pkl --input-shape N,F) [--out DIR] "
    "[--opset N] [--task T] [--static-batch] [--record-modules] [--bench] [--runs N] [--warmup N] "
    "[--threads N] "
    "[--max-ratio R] [--quantize [--int8-min-sqnr DB]] "
    "[--python PATH] [--timeout S] [--json]";

fs::path executableDir() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : self.parent_path();
}

engine::ExportRequest requestFromArguments(const Arguments& a) {
    engine::ExportRequest r;
    int sources = 0;
    if (auto v = a.value("torchvision"))
        r.sourceKind = engine::ExportSourceKind::Torchvision, r.source = *v, ++sources;
    if (auto v = a.value("script"))
        r.sourceKind = engine::ExportSourceKind::Script, r.source = *v, ++sources;
    if (auto v = a.value("torchscript"))
        r.sourceKind = engine::ExportSourceKind::TorchScript, r.source = *v, ++sources;
    if (auto v = a.value("sklearn"))
        r.sourceKind = engine::ExportSourceKind::Sklearn, r.source = *v, ++sources;
    if (sources != 1)
        throw UsageError(
            "give exactly one of --torchvision, --script, --torchscript, --sklearn\nusage: " +
            std::string(kUsage));
    if (a.value("out")) {
        r.outDir = *a.value("out");
    } else if (r.sourceKind == engine::ExportSourceKind::Sklearn) {
        r.outDir =
            fs::path(r.source).replace_extension("").string() + "_onnx";  // beside the pickle
    } else {
        throw UsageError("--out DIR is required\nusage: " + std::string(kUsage));
    }
    r.inputShape = a.value("input-shape").value_or("");
    r.opset = static_cast<int>(a.intValue("opset", 0));
    r.task = a.value("task").value_or("");
    r.dynamicBatch = !a.flag("static-batch");
    r.recordModules = a.flag("record-modules");
    r.runs = static_cast<int>(a.intValue("runs", 10));
    r.warmup = static_cast<int>(a.intValue("warmup", 2));
    r.threads = static_cast<int>(a.intValue("threads", 0));
    r.python = a.value("python").value_or("/usr/bin/python3");
    r.timeoutSeconds = a.doubleValue("timeout", 600);
    if (auto problem = engine::validateExportRequest(r); !problem.empty())
        throw UsageError(problem);
    if (access(r.python.c_str(), X_OK) != 0)
        throw UsageError("--python " + r.python + ": not an executable file");
    return r;
}

void printReport(const engine::ExportReport& report) {
    for (const auto& line : report.lines) {
        const char* mark = line.status == engine::ReportStatus::Passed    ? "PASS"
                           : line.status == engine::ReportStatus::Failed  ? "FAIL"
                           : line.status == engine::ReportStatus::Warning ? "WARN"
                                                                          : "skip";
        std::printf("  %-4s %-26s %s\n", mark, line.title.c_str(), line.figure.c_str());
    }
    std::printf("%s; report written to %s and report.json\n",
                report.passed ? "every check passed" : "a check FAILED",
                (report.folder / "report.md").c_str());
}

// The scikit-learn export's checks: labels exactly, probabilities within 1e-5, throughput.
int validateSklearnFolder(const engine::ExportRequest& request, bool bench, bool json) {
    engine::SklearnExportOptions options;
    options.benchmark = bench;
    options.warmup = request.warmup;
    options.runs = request.runs;
    options.threads = request.threads;
    auto report =
        engine::validateSklearnExport(request.outDir, options, [&](const std::string& step) {
            if (!json) std::printf("%s\n", step.c_str());
            std::fflush(stdout);
        });
    if (!report) throw UsageError(report.error().message);
    if (auto written = engine::writeSklearnExportReport(*report); !written)
        throw UsageError(written.error().message);
    if (json) {
        auto doc = nlohmann::json::parse(engine::sklearnExportReportJson(*report));
        doc["exported"] = true;
        printJson(doc);
    } else {
        printReport(report->report);
    }
    return report->report.passed ? kExitOk : kExitCheckFailed;
}

int runExport(const Arguments& a) {
    const engine::ExportRequest request = requestFromArguments(a);
    const double maxRatio = a.doubleValue("max-ratio", 0);
    if (maxRatio < 0) throw UsageError("--max-ratio must not be negative");
    const bool json = a.flag("json");

    const auto script = engine::findExporterScript(executableDir());
    if (!script)
        throw UsageError("cannot find onnxlens_export.py (set ONNXLENS_EXPORTER to its path)");
    std::error_code ec;
    fs::create_directories(request.outDir, ec);
    if (ec)
        throw UsageError(request.outDir.string() + ": cannot create the folder: " + ec.message());

    // The exporter's log: on stdout as it comes, or on stderr when stdout carries the JSON.
    FILE* logStream = json ? stderr : stdout;
    const auto child = runChildProcess(engine::exporterCommandLine(request, *script),
                                       request.timeoutSeconds, [&](const std::string& line) {
                                           std::fprintf(logStream, "  | %s\n", line.c_str());
                                           std::fflush(logStream);
                                       });
    engine::ExporterOutcome outcome;
    outcome.exitCode = child.exitCode;
    outcome.signal = child.signal;
    outcome.timedOut = child.timedOut;
    outcome.cancelled = child.interrupted;
    outcome.failedToStart = !child.started;
    outcome.stderrText = child.stderrText;
    if (auto failure = engine::describeExporterOutcome(outcome, request)) {
        if (!child.started && !child.error.empty()) failure->message += " (" + child.error + ")";
        if (json)
            printJson({{"exported", false},
                       {"passed", false},
                       {"error", failure->message},
                       {"hint", failure->hint}});
        throw UsageError(failure->message + "\nhint: " + failure->hint);
    }

    if (request.sourceKind == engine::ExportSourceKind::Sklearn)
        return validateSklearnFolder(request, a.flag("bench"), json);

    engine::ExportReportOptions options;
    options.benchmark = a.flag("bench");
    options.warmup = request.warmup;
    options.runs = request.runs;
    options.threads = request.threads;
    options.maxLatencyRatio = maxRatio;
    // PyTorch timed in turn with the engine by the same script, serving timing rounds.
    options.python = request.python;
    options.exporterScript = *script;
    options.quantize = a.flag("quantize");
    options.int8MinSqnrDb = a.doubleValue("int8-min-sqnr", options.int8MinSqnrDb);
    auto report = engine::validateExport(request.outDir, options, [&](const std::string& step) {
        if (!json) std::printf("%s\n", step.c_str());
        std::fflush(stdout);
    });
    if (!report) throw UsageError(report.error().message);
    if (auto written = engine::writeExportReport(*report); !written)
        throw UsageError(written.error().message);
    if (json) {
        auto doc = nlohmann::json::parse(engine::exportReportJson(*report));
        doc["exported"] = true;
        printJson(doc);
    } else {
        printReport(*report);
    }
    return report->passed ? kExitOk : kExitCheckFailed;
}

}  // namespace

Command addExportCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "export",
        "export a PyTorch or scikit-learn model to ONNX in a child Python process and validate it "
        "against the original (exit 1 when a check fails, 2 when the export fails)");
    addValueOption(*command, "torchvision", "NAME", "a torchvision model by name (resnet18...)");
    addValueOption(*command, "script", "FILE",
                   "a Python file defining the model (and its example input)");
    addValueOption(*command, "torchscript", "FILE",
                   "a TorchScript archive (.pt); needs --input-shape");
    addValueOption(*command, "sklearn", "PIPELINE.pkl",
                   "a pickled scikit-learn estimator or pipeline; needs --input-shape N,F");
    addValueOption(*command, "input-shape", "S", "the example input's shape, comma-separated");
    addValueOption(*command, "out", "DIR",
                   "where model.onnx, its test data and the report go (default for --sklearn: "
                   "beside the pickle)");
    addValueOption(*command, "opset", "N", "the ONNX opset to export to (default: the exporter's)");
    addValueOption(*command, "task", "T",
                   "input preset of a text model: default, pooling, text-classification, "
                   "question-answering");
    addFlag(*command, "static-batch", "keep the batch dim fixed instead of dynamic");
    addFlag(*command, "record-modules",
            "record each PyTorch module's output and compare the export module by module (done "
            "anyway when the outputs do not match PyTorch's)");
    addFlag(*command, "bench", "time the engine against PyTorch");
    addValueOption(*command, "runs", "N", "timed runs of --bench (default 10)");
    addValueOption(*command, "warmup", "N", "untimed runs of --bench first (default 2)");
    addThreadsOption(*command);
    addValueOption(*command, "max-ratio", "R",
                   "fail when the engine is more than R times slower than PyTorch (0: no limit)");
    addFlag(*command, "quantize", "also quantize the export to int8 and check it");
    addValueOption(*command, "int8-min-sqnr", "DB",
                   "the SQNR the int8 model's outputs must reach with --quantize (default 20)");
    addValueOption(*command, "python", "PATH", "the Python interpreter (default /usr/bin/python3)");
    addValueOption(*command, "timeout", "S", "time limit of the exporter in seconds (default 600)");
    addJsonFlag(*command, "print the report as one JSON document (the exporter's log on stderr)");
    return {command, runExport};
}

}  // namespace onnxlens::cli
