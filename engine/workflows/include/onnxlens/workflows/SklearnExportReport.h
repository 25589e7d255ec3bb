#pragma once
// Validating a scikit-learn export folder (model.onnx, test_data_set_0, export.json as
// resources/exporter/onnxlens_sklearn_export.py writes them): the model loads and passes the onnx
// checker, the engine's labels equal scikit-learn's predict() exactly, its probabilities (or
// regression values) are within a tolerance of predict_proba() (predict()), and its throughput
// in rows per second against scikit-learn's at batch 1 and 1,000. Shared by
// `onnxlens-cli export --sklearn` and the GUI's report card.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "onnxlens/workflows/ExportReport.h"

namespace onnxlens::engine {

struct SklearnExportOptions {
    double probabilityTolerance = 1e-5;  // absolute, for probabilities and regression values
    bool benchmark = true;
    int warmup = 2, runs = 10;
    int threads = 0;  // engine intra-op threads; <= 0: all cores
};

struct SklearnThroughput {
    std::int64_t batch = 0;
    double engineRowsPerSecond = 0, sklearnRowsPerSecond = 0;
    double engineMedianMs = 0, sklearnMedianMs = 0;
};

struct SklearnExportReport {
    ExportReport report;  // lines, folder, passed, source and versions (as for PyTorch)
    std::string estimator, sklearnVersion;
    std::vector<std::string> converted;  // the estimators the exporter converted, in order
    std::int64_t rows = 0;
    std::int64_t labelMismatches = 0;
    double maxProbabilityError = 0;  // or the largest regression-value error
    std::vector<SklearnThroughput> throughput;
};

// True when the folder's export.json says the source was scikit-learn.
bool isSklearnExport(const std::filesystem::path& folder);

// Fails (an Error naming the folder) only when the folder is not an export; a check that does
// not hold is a failed line. Setting `cancel` stops between runs with an Error "cancelled".
Result<SklearnExportReport> validateSklearnExport(const std::filesystem::path& folder,
                                                  const SklearnExportOptions& options = {},
                                                  const ExportReportProgress& progress = {},
                                                  const std::atomic<bool>* cancel = nullptr);

std::string sklearnExportReportMarkdown(const SklearnExportReport& report);
std::string sklearnExportReportJson(const SklearnExportReport& report);
// report.md and report.json beside the model; errors name the file.
Status writeSklearnExportReport(const SklearnExportReport& report);

}  // namespace onnxlens::engine
