#pragma once
// What int8 quantization costs: the float and int8 models run on the same inputs (every
// test_data_set_* beside the float model, else seeded random inputs following the declared dims),
// compared output by output (max and mean abs error, cosine similarity, SQNR, and for 2-D logits
// top-1 agreement and top-5 overlap) and quantized node by quantized node (the SQNR of the node's
// output tensor against the float model's same tensor, weakest first, as ONNX Runtime's
// qdq_loss_debug orders them); then both models' latency (same threads) and the size ratio.
// Shared by `onnxlens-cli quantize --report`, the export pipeline and the GUI's report card.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/Quantizer.h"

namespace onnxlens::engine {

// The pass/fail gate of the report: every float output's SQNR at least `minSqnrDb`, and (when set)
// its max abs error at most `maxAbsError`.
struct QuantizationTolerance {
    double minSqnrDb = 20.0;
    double maxAbsError = 0;  // <= 0: not checked
};

struct QuantizationReportOptions {
    QuantizationTolerance tolerance;
    int threads = 0;  // both models' sessions; <= 0: all cores
    bool benchmark = true;
    int warmup = 3, runs = 20;
    std::uint64_t seed = 0;   // random inputs when there is no test data set
    SymbolBindings dims;      // symbolic dims of random inputs (unbound: 1)
    int randomInputSets = 2;  // how many random input sets
    bool useTestDataSets = true;
};

// Sums over every element of every input set, from which the figures follow.
struct AgreementFigures {
    std::int64_t elements = 0;
    double maxAbsError = 0, meanAbsError = 0;
    double cosine = 1;
    double sqnrDb = std::numeric_limits<double>::infinity();  // infinite when identical
};

struct OutputAgreement {
    std::string name;
    AgreementFigures figures;
    bool logits = false;  // rank-2 float with at least two columns
    std::int64_t rows = 0;
    double top1Agreement = 0;  // share of rows whose argmax agrees
    double top5Overlap = 0;    // mean share of the float top-5 classes also in the int8 top-5
    bool passed = false;
    std::string problem;  // why it could not be compared (dtype or shape differs, not a tensor)
};

struct NodeAgreement {
    std::string name, opType, output;
    std::vector<std::string> int8Nodes;
    AgreementFigures figures;
};

struct QuantizationReport {
    std::string floatModel, int8Model;
    QuantizeOptions settings;
    QuantizationTolerance tolerance;
    std::vector<std::string> inputSets;  // "test_data_set_0", or "random (seed 0)"
    std::vector<OutputAgreement> outputs;
    std::vector<NodeAgreement> nodes;  // weakest (lowest SQNR) first
    std::map<std::string, int> quantizedPerOpType;
    std::vector<SkippedNode> skipped;
    std::uint64_t floatBytes = 0, int8Bytes = 0;
    double sizeRatio = 0;  // float / int8
    bool benchmarked = false;
    int threads = 0;
    int warmup = 0;
    LatencyStatistics floatLatency, int8Latency;
    double speedup = 0;  // float median / int8 median
    bool passed = false;
};

struct QuantizationReportProgress {
    std::string step;  // "running the float model on test_data_set_0"
    int done = 0, total = 0;
};
using QuantizationReportProgressCallback = std::function<void(const QuantizationReportProgress&)>;

// Runs both models (compiled from memory: nothing is written). `int8Bytes` is the size the int8
// model has (or will have) on disk. Errors name the model: a run that fails, cancellation.
Result<QuantizationReport> buildQuantizationReport(
    const QuantizedModelFile& quantized, std::uint64_t int8Bytes, const std::string& int8Name,
    const QuantizationReportOptions& options,
    const QuantizationReportProgressCallback& progress = {},
    const std::atomic<bool>* cancel = nullptr);

// The int8 model's size once written (the report is built before writing it): sets the ratio.
void setQuantizedModelBytes(QuantizationReport& report, std::uint64_t int8Bytes);

// Accumulates the agreement of `actual` (int8) with `reference` (float), element by element.
class AgreementAccumulator {
  public:
    // False (and nothing added) when the two are not numeric tensors of the same shape.
    bool add(const Tensor& reference, const Tensor& actual);
    AgreementFigures figures() const;

  private:
    std::int64_t n_ = 0;
    double sumRef2_ = 0, sumAct2_ = 0, sumDot_ = 0, sumErr2_ = 0, sumAbs_ = 0, maxAbs_ = 0;
};

nlohmann::json quantizationReportJson(const QuantizationReport& report);
std::string quantizationReportMarkdown(const QuantizationReport& report);
// report.md and report.json in `folder` (created when missing), each written atomically.
Status writeQuantizationReport(const QuantizationReport& report,
                               const std::filesystem::path& folder);

// "38.2 dB", "inf dB" (identical)
std::string formatSqnr(double db);

}  // namespace onnxlens::engine
