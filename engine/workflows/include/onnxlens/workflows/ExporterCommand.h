#pragma once
// Starting the PyTorch exporter (resources/exporter/onnxlens_export.py) the same way from the CLI
// and the GUI: where the script is, its command line, and what its exit means. The process itself
// is run by the caller (QProcess in the GUI, a POSIX runner in the CLI).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace onnxlens::engine {

// Sklearn: a pickled scikit-learn estimator or Pipeline, converted by onnxlens_sklearn_export.py.
enum class ExportSourceKind { Torchvision, Script, TorchScript, Sklearn };

struct ExportRequest {
    ExportSourceKind sourceKind = ExportSourceKind::Torchvision;
    std::string source;      // torchvision model name, or the .py / .pt file
    std::string inputShape;  // "1x3x224x224" (TorchScript; optional otherwise); "N,F" (Sklearn)
    std::filesystem::path outDir;
    int opset = 0;  // 0: the exporter's default (newest torch supports, at most 17)
    std::string
        task;  // empty, or a text preset: default, pooling, text-classification, question-answering
    bool dynamicBatch = true;
    // The exporter records each module's output on the first data set's inputs (modules/), so
    // that the report compares the export with PyTorch module by module even when it passes.
    bool recordModules = false;
    int runs = 10, warmup = 2, threads = 0;
    std::string python = "/usr/bin/python3";
    double timeoutSeconds = 600;
};

const std::vector<std::string>& exportTasks();  // the --task presets, "default" first

// Empty when the request can be started, else what is wrong ("--input-shape is required ...").
std::string validateExportRequest(const ExportRequest& request);

// The script: $ONNXLENS_EXPORTER when set, else share/onnxlens/exporter/onnxlens_export.py beside
// the installed binary (`executableDir`/../share/...), else the source tree's copy.
std::optional<std::filesystem::path> findExporterScript(const std::filesystem::path& executableDir);

// argv for execv: python, -u, the script, its options. A Sklearn request runs
// onnxlens_sklearn_export.py from the folder of `script`.
std::vector<std::string> exporterCommandLine(const ExportRequest& request,
                                             const std::filesystem::path& script);

// How an exporter run ended, and the message and hint shown for it.
struct ExporterOutcome {
    int exitCode = 0;      // when it exited
    int signal = 0;        // when a signal ended it
    bool crashed = false;  // ended by a signal whose number is unknown (QProcess::CrashExit)
    bool timedOut = false;
    bool cancelled = false;
    bool failedToStart = false;
    std::string stderrText;  // everything it wrote on stderr
};

struct ExporterFailure {
    std::string message, hint;
};

// nullopt when the export succeeded. Otherwise the exporter's own "error:"/"hint:" lines when it
// wrote them, or a message for crashes, time-outs, cancellation and interpreters that won't start.
std::optional<ExporterFailure> describeExporterOutcome(const ExporterOutcome& outcome,
                                                       const ExportRequest& request);

}  // namespace onnxlens::engine
