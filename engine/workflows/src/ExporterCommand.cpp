#include "onnxlens/workflows/ExporterCommand.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace onnxlens::engine {

namespace fs = std::filesystem;

namespace {

// The exit codes of onnxlens_export.py (EXIT_* there).
constexpr int kExporterUsage = 2;
constexpr int kExporterNoTorch = 3;
constexpr int kExporterScriptRaised = 4;
constexpr int kExporterUnsupportedOperator = 5;

bool isShape(const std::string& text) {
    if (text.empty()) return false;
    std::stringstream parts(text);
    std::string shape;
    while (std::getline(parts, shape, ',')) {
        if (shape.empty() || shape.front() == 'x' || shape.back() == 'x') return false;
        if (!std::all_of(shape.begin(), shape.end(),
                         [](char c) { return (c >= '0' && c <= '9') || c == 'x'; }))
            return false;
        if (shape.find("xx") != std::string::npos) return false;
    }
    return true;
}

std::string lastLineStartingWith(const std::string& text, const std::string& prefix) {
    std::string found, line;
    std::stringstream lines(text);
    while (std::getline(lines, line))
        if (line.rfind(prefix, 0) == 0) found = line.substr(prefix.size());
    return found;
}

std::string lastNonEmptyLine(const std::string& text) {
    std::string found, line;
    std::stringstream lines(text);
    while (std::getline(lines, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) found = line;
    return found;
}

}  // namespace

const std::vector<std::string>& exportTasks() {
    static const std::vector<std::string> tasks = {"default", "pooling", "text-classification",
                                                   "question-answering"};
    return tasks;
}

std::string validateExportRequest(const ExportRequest& r) {
    if (r.source.empty())
        return "no source: give a torchvision model name, a Python script or a TorchScript file";
    if (r.outDir.empty()) return "no output folder (--out DIR)";
    if (r.sourceKind != ExportSourceKind::Torchvision && !fs::is_regular_file(r.source))
        return r.source + ": no such file";
    if (r.sourceKind == ExportSourceKind::Sklearn) {
        const auto comma = r.inputShape.find(',');
        const bool rowsAndFeatures =
            comma != std::string::npos && comma > 0 && comma + 1 < r.inputShape.size() &&
            r.inputShape.find(',', comma + 1) == std::string::npos &&
            std::all_of(r.inputShape.begin(), r.inputShape.end(),
                        [](char c) { return (c >= '0' && c <= '9') || c == ','; });
        if (!rowsAndFeatures)
            return "a scikit-learn source needs --input-shape N,F (held-out rows, features), e.g. "
                   "200,8";
        if (r.runs < 1 || r.warmup < 0) return "--runs must be >= 1 and --warmup >= 0";
        if (!(r.timeoutSeconds > 0)) return "--timeout must be positive";
        if (r.python.empty()) return "no Python interpreter given";
        return {};
    }
    if (r.sourceKind == ExportSourceKind::TorchScript && r.inputShape.empty() && r.task.empty())
        return "a TorchScript source needs --input-shape (e.g. 1x3x224x224)";
    if (!r.inputShape.empty() && !isShape(r.inputShape))
        return "--input-shape '" + r.inputShape + "' is not a shape like 1x3x224x224";
    if (!r.task.empty() &&
        std::find(exportTasks().begin(), exportTasks().end(), r.task) == exportTasks().end())
        return "unknown --task '" + r.task +
               "' (default, pooling, text-classification, question-answering)";
    if (r.opset != 0 && (r.opset < 7 || r.opset > 30)) return "--opset must be between 7 and 30";
    if (r.runs < 1 || r.warmup < 0) return "--runs must be >= 1 and --warmup >= 0";
    if (r.threads < 0) return "--threads must be >= 0";
    if (!(r.timeoutSeconds > 0)) return "--timeout must be positive";
    if (r.python.empty()) return "no Python interpreter given";
    return {};
}

std::optional<fs::path> findExporterScript(const fs::path& executableDir) {
    if (const char* env = std::getenv("ONNXLENS_EXPORTER"); env && *env) return fs::path(env);
    std::vector<fs::path> candidates;
    if (!executableDir.empty())
        candidates.push_back(executableDir.parent_path() / "share" / "onnxlens" / "exporter" /
                             "onnxlens_export.py");
#ifdef ONNXLENS_EXPORTER_SOURCE_PATH
    candidates.emplace_back(ONNXLENS_EXPORTER_SOURCE_PATH);
#endif
    for (const auto& c : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(c, ec)) return c;
    }
    return std::nullopt;
}

std::vector<std::string> exporterCommandLine(const ExportRequest& r, const fs::path& script) {
    if (r.sourceKind == ExportSourceKind::Sklearn)
        return {r.python,
                "-u",
                (script.parent_path() / "onnxlens_sklearn_export.py").string(),
                "--pickle",
                r.source,
                "--input-shape",
                r.inputShape,
                "--out",
                r.outDir.string(),
                "--bench",
                "--runs",
                std::to_string(r.runs),
                "--warmup",
                std::to_string(r.warmup)};
    // -u: unbuffered, so the log streams line by line through the pipe.
    std::vector<std::string> argv = {r.python, "-u", script.string()};
    switch (r.sourceKind) {
        case ExportSourceKind::Torchvision:
            argv.insert(argv.end(), {"--torchvision", r.source});
            break;
        case ExportSourceKind::Script:
            argv.insert(argv.end(), {"--script", r.source});
            break;
        case ExportSourceKind::TorchScript:
            argv.insert(argv.end(), {"--torchscript", r.source});
            break;
        case ExportSourceKind::Sklearn:
            break;  // returned above
    }
    if (!r.inputShape.empty()) argv.insert(argv.end(), {"--input-shape", r.inputShape});
    argv.insert(argv.end(), {"--out", r.outDir.string()});
    if (r.opset > 0) argv.insert(argv.end(), {"--opset", std::to_string(r.opset)});
    if (!r.task.empty()) argv.insert(argv.end(), {"--task", r.task});
    if (!r.dynamicBatch) argv.push_back("--no-dynamic-batch");
    if (r.recordModules) argv.push_back("--record-modules");
    argv.insert(argv.end(),
                {"--runs", std::to_string(r.runs), "--warmup", std::to_string(r.warmup)});
    if (r.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(r.threads)});
    return argv;
}

std::optional<ExporterFailure> describeExporterOutcome(const ExporterOutcome& o,
                                                       const ExportRequest& r) {
    if (o.cancelled)
        return ExporterFailure{
            "the export was cancelled",
            "the output folder may hold a partial export; export again to replace it"};
    if (o.timedOut) {
        std::ostringstream message;
        message << "the exporter did not finish within " << r.timeoutSeconds
                << " s and was stopped";
        return ExporterFailure{
            message.str(),
            "a large model may need more time (--timeout, or the dialog's time limit); "
            "a script that waits for input or the network never finishes"};
    }
    if (o.failedToStart)
        return ExporterFailure{"cannot start the Python interpreter '" + r.python + "'",
                               "choose an installed Python that has torch (--python PATH, or the "
                               "dialog's Python setting)"};
    if (o.signal != 0 || o.crashed) {
        const char* name = o.signal != 0 ? strsignal(o.signal) : nullptr;
        return ExporterFailure{
            o.signal == 0 ? std::string("the exporter crashed")
                          : "the exporter crashed (signal " + std::to_string(o.signal) + ": " +
                                (name ? name : "unknown") + ")",
            "torch or the model's code crashed the Python process; the log shows how far it got. "
            "Try another Python or torch version, or simplify the model"};
    }
    if (o.exitCode == 0) return std::nullopt;
    ExporterFailure failure{lastLineStartingWith(o.stderrText, "error: "),
                            lastLineStartingWith(o.stderrText, "hint: ")};
    if (failure.message.empty()) {
        // An interpreter that is not Python, or argparse's usage error: its last line says it.
        const std::string last = lastNonEmptyLine(o.stderrText);
        failure.message = "the exporter failed with exit code " + std::to_string(o.exitCode) +
                          (last.empty() ? std::string() : ": " + last);
    }
    if (failure.hint.empty()) {
        switch (o.exitCode) {
            case kExporterUsage:
                failure.hint = "check the export options";
                break;
            case kExporterNoTorch:
                failure.hint = "choose a Python that has torch (--python PATH)";
                break;
            case kExporterScriptRaised:
                failure.hint = "fix the script and export again";
                break;
            case kExporterUnsupportedOperator:
                failure.hint = "try another opset or rewrite that operation";
                break;
            default:
                failure.hint = "the exporter's log shows what happened";
                break;
        }
    }
    return failure;
}

}  // namespace onnxlens::engine
