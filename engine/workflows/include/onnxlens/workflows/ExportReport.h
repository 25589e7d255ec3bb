#pragma once
// Validating a PyTorch export folder (model.onnx, test_data_set_N, export.json as
// resources/exporter/onnxlens_export.py writes them): the model loads and passes the onnx
// checker, the engine reproduces PyTorch's outputs, the dynamic batch works, and the engine's
// latency against PyTorch's. Shared by `onnxlens-cli export` and the GUI's report card.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/ModuleComparison.h"

namespace onnxlens::engine {

// Warning: the check ran and did not fail, but its figure cannot be trusted (outputs near zero,
// a busy machine); not a PASS.
enum class ReportStatus { Passed, Failed, Skipped, Warning };

const char* reportStatusName(ReportStatus status);  // "pass", "fail", "skip", "warn"

// One line of the report card: a gate, whether it held, and the figure that says so.
struct ExportReportLine {
    std::string key;    // "exported", "checker", "numbers", "dynamic_batch", "latency"
    std::string title;  // "Numbers match PyTorch"
    ReportStatus status = ReportStatus::Failed;
    std::string figure;  // "max abs error 2.4e-06 (threshold 1e-04)"
};

struct ExportReportOptions {
    // The numbers agree when |engine - PyTorch| <= atol + rtol * |PyTorch| for every element.
    double maxAbsErrorThreshold = 1e-4;  // atol
    double rtol = 1e-3;
    bool benchmark = true;  // the latency line; without it the line is skipped
    int warmup = -1;        // < 0: the warm-up and runs PyTorch was timed with (export.json)
    int runs = -1;
    int threads = 0;             // engine intra-op threads; <= 0: all cores
    double maxLatencyRatio = 0;  // > 0: the latency line fails when engine/PyTorch is above it
    // Both set: PyTorch is timed interleaved with the engine (one run of each in turn) by the
    // exporter script serving timing rounds (`python script --serve-timing FOLDER`). Otherwise,
    // or when that server cannot start, the latency export.json recorded at export time.
    std::string python;
    std::filesystem::path exporterScript;
    // Also writes model.int8.onnx (dynamic int8, MatMul/Gemm/Conv per tensor) and validates it
    // against PyTorch with its own, looser tolerance: every output's SQNR >= int8MinSqnrDb.
    bool quantize = false;
    double int8MinSqnrDb = 20.0;
    // Module by module (the "modules" line): when the folder has modules/index.json (exported with
    // --record-modules), or when the numbers do not match and `python` and `exporterScript` are
    // set (the script then records the modules' outputs, as the timing server does), each
    // PyTorch module's output is compared with the ONNX value of its scope and the report names
    // the first module that diverges.
    bool recordModulesOnMismatch = true;
};

// The int8 model of an export (ExportReportOptions::quantize).
struct QuantizedExportFigures {
    std::filesystem::path model;  // model.int8.onnx beside model.onnx
    std::uint64_t bytes = 0;
    double sizeRatio = 0;  // float / int8 file size
    std::map<std::string, int> quantizedPerOpType;
    double maxAbsError = 0, cosine = 0,
           sqnrDb = 0;  // against PyTorch, worst output over the data sets
    bool hasLatency = false;
    LatencyStatistics latency;
    double speedup = 0;   // engine float median / engine int8 median
    std::string problem;  // why it could not be quantized or run
};

// Called from the validating thread between steps ("running test_data_set_1").
using ExportReportProgress = std::function<void(const std::string&)>;

struct DataSetAgreement {
    std::string name;        // "test_data_set_0"
    std::int64_t batch = 0;  // the first input's leading dim
    double maxAbsError = 0;  // over every output
    double maxRelError = 0;
    double minCosineSimilarity = 1;  // the least similar output
    std::int64_t outsideCount = 0, elementCount = 0;
    bool withinTolerance = false;  // no element outside atol + rtol * |expected|
    std::string agreement;         // describeAgreement over every output
    std::string warning;           // uninformativeReferenceWarning of the first output with one
    std::string problem;           // why it could not be compared (a run error, a dtype mismatch)
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
    LatencyStatistics pytorchLatency;  // interleaved with the engine, else from export.json
    int pytorchThreads = 0;
    double latencyRatio = 0;    // engine median / PyTorch median
    LatencyComparison latency;  // the ratio's noise: interleaved, within noise, busy
    std::string pytorchTiming;  // how PyTorch was timed ("interleaved with the engine", ...)
    bool quantized = false;     // the int8 lines were requested
    QuantizedExportFigures int8;
    bool modulesCompared = false;  // `modules` holds the module-by-module comparison
    ModuleComparison modules;
};

// Sets report.passed: no line failed (warnings and skipped lines do not fail it).
void concludeExportReport(ExportReport& report);

// The int8 lines of the report (int8_numbers, int8_size, int8_latency), appended to `report`.
void addQuantizedExportLines(ExportReport& report, const ExportReportOptions& options,
                             const ExportReportProgress& progress, const std::atomic<bool>* cancel);

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
