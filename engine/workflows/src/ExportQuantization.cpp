// The int8 part of an export report: model.int8.onnx beside model.onnx, validated against
// PyTorch's outputs with a tolerance int8 can meet (SQNR rather than 1e-4), its size and latency
// against the float model.
#include <cstdio>
#include <limits>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/ExportReport.h"
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/Quantizer.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::engine {

namespace {

namespace fs = std::filesystem;

std::string printed(const char* pattern, double a, double b = 0, double c = 0) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, pattern, a, b, c);
    return buffer;
}

bool stop(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(); }

}  // namespace

void addQuantizedExportLines(ExportReport& report, const ExportReportOptions& options,
                             const ExportReportProgress& progress,
                             const std::atomic<bool>* cancel) {
    report.quantized = true;
    auto& int8 = report.int8;
    const fs::path floatPath = report.folder / "model.onnx";
    int8.model = report.folder / "model.int8.onnx";
    const std::string tolerance = printed("SQNR >= %g dB against PyTorch", options.int8MinSqnrDb);
    auto fail = [&](const std::string& problem) {
        int8.problem = problem;
        report.lines.push_back(
            {"int8_numbers", "int8 model matches PyTorch", ReportStatus::Failed, problem});
        report.lines.push_back(
            {"int8_size", "int8 model size", ReportStatus::Skipped, "no int8 model"});
        report.lines.push_back(
            {"int8_latency", "int8 latency against float", ReportStatus::Skipped, "no int8 model"});
    };
    if (progress) progress("quantizing to int8 (dynamic)");
    QuantizeOptions quantizeOptions;
    quantizeOptions.opTypes = {"MatMul", "Gemm", "Conv"};
    auto quantized = quantizeModelFile(floatPath, quantizeOptions);
    if (!quantized) return fail(quantized.error().message);
    auto written = writeQuantizedModel(*quantized, int8.model);
    if (!written) return fail(written.error().message);
    int8.bytes = written->totalBytes();
    int8.sizeRatio =
        int8.bytes ? static_cast<double>(quantized->bytesBefore) / static_cast<double>(int8.bytes)
                   : 0;
    int8.quantizedPerOpType = quantized->result.quantizedPerOpType;

    auto loaded = loadModel(int8.model);
    if (!loaded) return fail(loaded.error().message);
    SessionOptions sessionOptions;
    sessionOptions.threads = options.threads;
    // The figures must come out the same when rerun at this thread count.
    sessionOptions.adaptThreadsToLoad = false;
    auto session = Session::create(std::move(*loaded), sessionOptions);
    if (!session) return fail(session.error().message);
    auto sets = discoverTestDataSets(floatPath, *quantized->floatModel.proto);
    if (!sets || sets->empty())
        return fail(sets ? "no test_data_set_* folder beside the model" : sets.error().message);

    // The worst output over every data set: lowest SQNR and cosine, largest abs error.
    int8.sqnrDb = std::numeric_limits<double>::infinity();
    int8.cosine = 1;
    for (const auto& set : *sets) {
        if (stop(cancel)) return fail("cancelled");
        if (progress) progress("running the int8 model on " + set.directory.filename().string());
        auto feeds = feedsFromTestDataSet(**session, set);
        if (!feeds) return fail(feeds.error().message);
        auto outputs = (*session)->run(*feeds);
        if (!outputs) return fail(outputs.error().message);
        for (std::size_t i = 0; i < set.outputFiles.size() && i < set.outputNames.size(); ++i) {
            std::size_t k = 0;
            while (k < (*session)->outputs().size() &&
                   (*session)->outputs()[k].name != set.outputNames[i])
                ++k;
            if (k >= outputs->size())
                return fail("the int8 model has no output named '" + set.outputNames[i] + "'");
            auto expected = readValueFile(set.outputFiles[i], &(*session)->outputs()[k].type);
            if (!expected) return fail(expected.error().message);
            AgreementAccumulator acc;
            if (!expected->isTensor() || !(*outputs)[k].isTensor() ||
                !acc.add(expected->tensor(), (*outputs)[k].tensor()))
                return fail(set.outputNames[i] +
                            ": the int8 output cannot be compared with PyTorch's");
            const auto f = acc.figures();
            int8.sqnrDb = std::min(int8.sqnrDb, f.sqnrDb);
            int8.cosine = std::min(int8.cosine, f.cosine);
            int8.maxAbsError = std::max(int8.maxAbsError, f.maxAbsError);
        }
    }
    int quantizedNodes = 0;
    for (const auto& [op, count] : int8.quantizedPerOpType) quantizedNodes += count;
    report.lines.push_back(
        {"int8_numbers", "int8 model matches PyTorch",
         int8.sqnrDb >= options.int8MinSqnrDb ? ReportStatus::Passed : ReportStatus::Failed,
         "SQNR " + formatSqnr(int8.sqnrDb) +
             printed(", cosine %.6f, max abs error %.3g", int8.cosine, int8.maxAbsError) +
             " (tolerance: " + tolerance + ")"});
    report.lines.push_back(
        {"int8_size", "int8 model size", ReportStatus::Passed,
         printed("%.2f MB -> %.2f MB (%.2fx smaller), ", quantized->bytesBefore / 1e6,
                 int8.bytes / 1e6, int8.sizeRatio) +
             std::to_string(quantizedNodes) + " nodes quantized"});

    ExportReportLine latency{
        "int8_latency", "int8 latency against float", ReportStatus::Skipped, {}};
    if (!options.benchmark || !report.hasEngineLatency) {
        latency.figure = "not measured (no benchmark requested)";
    } else {
        if (progress) progress("timing the int8 model");
        auto feeds = feedsFromTestDataSet(**session, sets->front());
        if (!feeds) return fail(feeds.error().message);
        const int warmup = options.warmup >= 0 ? options.warmup : 2;
        const int runs = options.runs > 0 ? options.runs : std::max(1, report.engineLatency.runs);
        BenchmarkRunner runner(**session, {warmup, runs, false});
        runner.setProgressCallback([&](const BenchmarkProgress&) {
            if (stop(cancel)) runner.cancel();
        });
        auto timed = runner.run(*feeds);
        if (!timed) return fail(timed.error().message);
        int8.latency = timed->statistics;
        int8.hasLatency = true;
        int8.speedup =
            int8.latency.medianMs > 0 ? report.engineLatency.medianMs / int8.latency.medianMs : 0;
        latency.status = ReportStatus::Passed;
        latency.figure =
            printed("engine median %.3f ms int8, %.3f ms float (%.2fx)", int8.latency.medianMs,
                    report.engineLatency.medianMs, int8.speedup);
    }
    report.lines.push_back(latency);
}

}  // namespace onnxlens::engine
