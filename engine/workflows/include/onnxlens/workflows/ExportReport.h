#pragma once
// Validating a PyTorch export folder (model.onnx, test_data_set_N, export.json as
// resources/exporter/onnxlens_export.py writes them): the model loads and passes the onnx
// checker, the engine reproduces PyTorch's outputs, the dynamic batch works, and the engine's
// latency against PyTorch's. Shared by `onnxlens-cli export` and the GUI's report card.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

enum class ReportStatus { Passed, Failed, Skipped };

const char* reportStatusName(ReportStatus status);  // "pass", "fail", "skip"

// One line of the report card: a gate, whether it held, and the figure that says so.
struct ExportReportLine {
    std::string key;    // "exported", "checker", "numbers", "dynamic_batch", "latency"
    std::string title;  // "Numbers match PyTorch"
    ReportStatus status = ReportStatus::Failed;
    std::string figure;  // "max abs error 2.4e-06 (threshold 1e-04)"
};

struct ExportReportOptions {
    double maxAbsErrorThreshold = 1e-4;
    bool benchmark = true;  // the latency line; without it the line is skipped
    int warmup = -1;        // < 0: the warm-up and runs PyTorch was timed with (export.json)
    int runs = -1;
    int threads = 0;             // engine intra-op threads; <= 0: all cores
    double maxLatencyRatio = 0;  // > 0: the latency line fails when engine/PyTorch is above it
};

// Called from the validating thread between steps ("running test_data_set_1").
using ExportReportProgress = std::function<void(const std::string&)>;

struct DataSetAgreement {
    std::string name;        // "test_data_set_0"
    std::int64_t batch = 0;  // the first input's leading dim
    double maxAbsError = 0;  // over every output
    std::string problem;     // why it could not be compared (a run error, a dtype mismatch)
};

struct ExportReport {
    std::filesystem::path folder;
    std::vector<ExportReportLine> lines;
    bool passed = false;  // no line failed

    // The figures behind the lines, for the JSON file and for tests.
    int opset = 0;
    std::uint64_t modelBytes = 0;
    std::string torchVersion, onnxVersion, sourceKind, sourceName;
    double exportSeconds = 0;
    std::vector<DataSetAgreement> dataSets;
    bool hasEngineLatency = false;
    LatencyStatistics engineLatency;
    int engineThreads = 0;
    LatencyStatistics pytorchLatency;  // from export.json
    int pytorchThreads = 0;
    double latencyRatio = 0;  // engine median / PyTorch median
};

// Runs every check on the folder. Fails (an Error naming the folder) only when the folder is not
// an export at all (no export.json, or it is not JSON); everything else is a failed line.
// Setting `cancel` stops between runs with an Error "cancelled".
Result<ExportReport> validateExport(const std::filesystem::path& folder,
                                    const ExportReportOptions& options = {},
                                    const ExportReportProgress& progress = {},
                                    const std::atomic<bool>* cancel = nullptr);

std::string exportReportMarkdown(const ExportReport& report);
std::string exportReportJson(const ExportReport& report);  // pretty-printed, ends with '\n'

// Writes report.md and report.json beside the model; errors name the file.
Status writeExportReport(const ExportReport& report);

}  // namespace onnxlens::engine
