#pragma once
// The QSettings keys the panels and dialogs remember their choices under, with their defaults:
// one list, so that the Settings dialog edits exactly what the panels read.
namespace onnxlens::widgets::settings {

// Benchmark panel.
inline constexpr const char* kBenchmarkWarmup = "benchmark/warmup";
inline constexpr int kBenchmarkWarmupDefault = 5;
inline constexpr const char* kBenchmarkRuns = "benchmark/runs";
inline constexpr int kBenchmarkRunsDefault = 50;
inline constexpr const char* kBenchmarkThreads = "benchmark/threads";  // 0: one per core
inline constexpr int kBenchmarkThreadsDefault = 0;
inline constexpr const char* kBenchmarkProfile = "benchmark/profile";
inline constexpr bool kBenchmarkProfileDefault = true;

// Compare panel (defaults: engine::Tolerance).
inline constexpr const char* kCompareRtol = "compare/rtol";
inline constexpr const char* kCompareAtol = "compare/atol";

// Export dialog: keys inside the group.
inline constexpr const char* kExportGroup = "export";
inline constexpr const char* kExportPython = "python";
inline constexpr const char* kExportPythonDefault = "/usr/bin/python3";
inline constexpr const char* kExportTimeout = "timeoutSeconds";
inline constexpr int kExportTimeoutDefault = 600;
inline constexpr const char* kExportThreads = "threads";  // 0: one per core
inline constexpr const char* kExportRuns = "runs";
inline constexpr int kExportRunsDefault = 10;
inline constexpr const char* kExportWarmup = "warmup";
inline constexpr int kExportWarmupDefault = 2;

// Quantize dialog (defaults: engine::QuantizeOptions; the output is remembered per model).
inline constexpr const char* kQuantizeFormat = "quantize/format";    // qoperator, qdq, int4
inline constexpr const char* kQuantizeOpTypes = "quantize/opTypes";  // comma-separated
inline constexpr const char* kQuantizePerChannel = "quantize/perChannel";
inline constexpr const char* kQuantizeBlockSize = "quantize/blockSize";
inline constexpr const char* kQuantizeSymmetric = "quantize/symmetric";
inline constexpr const char* kQuantizeAccuracyLevel = "quantize/accuracyLevel";
inline constexpr const char* kQuantizeMinSqnr = "quantize/minSqnrDb";
inline constexpr double kQuantizeMinSqnrDefault = 20.0;

}  // namespace onnxlens::widgets::settings
