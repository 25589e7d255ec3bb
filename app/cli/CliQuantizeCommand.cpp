// onnxlens-cli quantize MODEL OUT.onnx: dynamic int8 quantization of the weights (Quantizer.h).
// Exit 0 when the int8 model was written, 2 on usage or input errors (nothing written then).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "CliCommon.h"
#include "CliSession.h"
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/Quantizer.h"

namespace onnxlens::cli {

namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

engine::QuantizeOptions optionsFromArguments(const Arguments& a) {
    engine::QuantizeOptions options;
    options.perChannel = a.flag("per-channel");
    if (auto types = a.value("op-types")) {
        options.opTypes = splitList(*types);
        if (options.opTypes.empty())
            throw UsageError("--op-types: give MatMul, Gemm, Conv and/or Gather, comma-separated");
        for (const auto& op : options.opTypes) {
            const auto& known = engine::quantizableOpTypes();
            if (std::find(known.begin(), known.end(), op) == known.end())
                throw UsageError("--op-types: cannot quantize '" + op +
                                 "' (MatMul, Gemm, Conv and Gather can be)");
        }
    }
    options.excludedNodes = a.values("exclude");
    const std::string format = a.value("format").value_or("qoperator");
    if (format == "qoperator")
        options.format = engine::QuantizationFormat::QOperator;
    else if (format == "qdq")
        options.format = engine::QuantizationFormat::QDQ;
    else if (format == "int4")
        options.format = engine::QuantizationFormat::Int4;
    else
        throw UsageError("--format: expected qoperator, qdq or int4, got '" + format + "'");
    const bool int4 = options.format == engine::QuantizationFormat::Int4;
    for (const char* only : {"block-size", "accuracy-level"})
        if (a.value(only) && !int4)
            throw UsageError(std::string("--") + only + " applies to --format int4 only");
    if ((a.flag("symmetric") || a.flag("asymmetric")) && !int4)
        throw UsageError("--symmetric and --asymmetric apply to --format int4 only");
    if (a.flag("symmetric") && a.flag("asymmetric"))
        throw UsageError("give --symmetric or --asymmetric, not both");
    if (int4) {
        if (options.perChannel)
            throw UsageError("--per-channel does not apply to --format int4 (blocks along K)");
        if (!a.value("op-types")) options.opTypes = {"MatMul"};
        options.blockSize = a.intValue("block-size", options.blockSize);
        if (options.blockSize < 16 || options.blockSize > 256 ||
            (options.blockSize & (options.blockSize - 1)) != 0)
            throw UsageError("--block-size: give a power of two from 16 to 256");
        options.accuracyLevel = a.intValue("accuracy-level", options.accuracyLevel);
        if (options.accuracyLevel < 0 || options.accuracyLevel > 4)
            throw UsageError("--accuracy-level: give 0 to 4");
        options.symmetric = !a.flag("asymmetric");
    }
    return options;
}

nlohmann::json summaryJson(const engine::QuantizedModelFile& q,
                           const engine::QuantizeOptions& options, const std::string& input,
                           const WrittenModel& written) {
    nlohmann::json quantized = nlohmann::json::array(), skipped = nlohmann::json::array();
    for (const auto& n : q.result.quantized)
        quantized.push_back(
            {{"name", n.name}, {"op_type", n.opType}, {"weight", n.weight}, {"output", n.output}});
    for (const auto& n : q.result.skipped)
        skipped.push_back({{"name", n.name}, {"op_type", n.opType}, {"reason", n.reason}});
    const bool int4 = options.format == engine::QuantizationFormat::Int4;
    const double ratio =
        written.totalBytes() ? static_cast<double>(q.bytesBefore) / written.totalBytes() : 0.0;
    return {{"input", input},
            {"output", written.file.string()},
            {"external_data", written.externalDataFile.empty()
                                  ? nlohmann::json()
                                  : nlohmann::json(written.externalDataFile.string())},
            {"format", engine::quantizationFormatName(options.format)},
            {"per_channel", options.perChannel},
            {"block_size", int4 ? nlohmann::json(options.blockSize) : nlohmann::json()},
            {"symmetric", int4 ? nlohmann::json(options.symmetric) : nlohmann::json()},
            {"accuracy_level", int4 ? nlohmann::json(options.accuracyLevel) : nlohmann::json()},
            {"op_types", options.opTypes},
            {"excluded", options.excludedNodes},
            {"opset_before", q.result.opsetBefore},
            {"opset_after", q.result.opsetAfter},
            {"quantized_per_op_type", q.result.quantizedPerOpType},
            {"quantized_count", q.result.quantized.size()},
            {"skipped_count", q.result.skipped.size()},
            {"quantized", quantized},
            {"skipped", skipped},
            {"bytes_before", q.bytesBefore},
            {"bytes_after", written.totalBytes()},
            {"size_ratio", ratio}};
}

void printSummary(const engine::QuantizedModelFile& q, const std::string& input,
                  const WrittenModel& written) {
    std::printf("%s -> %s: ", input.c_str(), written.file.c_str());
    bool first = true;
    for (const auto& [op, count] : q.result.quantizedPerOpType) {
        std::printf("%s%d %s", first ? "" : ", ", count, op.c_str());
        first = false;
    }
    std::printf(" quantized, %zu skipped\n", q.result.skipped.size());
    for (const auto& s : q.result.skipped)
        std::printf("  skipped %s (%s): %s\n", s.name.c_str(), s.opType.c_str(), s.reason.c_str());
    std::printf(
        "  size %.2f MB -> %.2f MB (%.2fx smaller)\n", q.bytesBefore / 1e6,
        written.totalBytes() / 1e6,
        written.totalBytes() ? static_cast<double>(q.bytesBefore) / written.totalBytes() : 0.0);
    if (q.result.opsetAfter != q.result.opsetBefore)
        std::printf("  opset raised from %lld to %lld\n",
                    static_cast<long long>(q.result.opsetBefore),
                    static_cast<long long>(q.result.opsetAfter));
    if (!written.externalDataFile.empty())
        std::printf("  weights in %s\n", written.externalDataFile.c_str());
}

engine::QuantizationReportOptions reportOptionsFromArguments(const Arguments& a) {
    engine::QuantizationReportOptions options;
    options.tolerance.minSqnrDb = a.doubleValue("min-sqnr", options.tolerance.minSqnrDb);
    options.tolerance.maxAbsError = a.doubleValue("max-abs-error", 0);
    options.threads = static_cast<int>(a.intValue("threads", 0));
    options.warmup = static_cast<int>(a.intValue("warmup", options.warmup));
    options.runs = static_cast<int>(a.intValue("runs", options.runs));
    if (options.warmup < 0 || options.runs < 1)
        throw UsageError("--warmup must be >= 0 and --runs >= 1");
    options.benchmark = !a.flag("no-bench");
    options.seed = static_cast<std::uint64_t>(a.intValue("seed", 0));
    options.dims = parseDims(a);
    return options;
}

int runQuantize(const Arguments& a) {
    const std::string input = a.positionals()[0], output = a.positionals()[1];
    const auto options = optionsFromArguments(a);
    ModelWriteOptions writeOptions;
    if (a.value("external-data-threshold")) {
        const auto threshold = a.intValue("external-data-threshold", 0);
        if (threshold <= 0)
            throw UsageError("--external-data-threshold must be a positive number of bytes");
        writeOptions.externalDataThreshold = static_cast<std::uint64_t>(threshold);
    }
    if (auto st = engine::checkQuantizeOutput(input, output); !st)
        throw UsageError(st.error().message);
    const auto reportFolder = a.value("report");
    const auto reportOptions = reportOptionsFromArguments(a);
    if (reportFolder) {
        std::error_code ec;
        std::filesystem::create_directories(*reportFolder, ec);
        if (ec || ::access(reportFolder->c_str(), W_OK) != 0)
            throw UsageError("--report " + *reportFolder + ": cannot write there" +
                             (ec ? ": " + ec.message() : ""));
    }

    auto quantized = engine::quantizeModelFile(input, options);
    if (!quantized) throw UsageError(quantized.error().message);
    // The report runs both models before anything is written: a model that fails to run leaves no
    // int8 file behind.
    std::optional<engine::QuantizationReport> report;
    if (reportFolder) {
        auto built = engine::buildQuantizationReport(
            *quantized, quantized->result.model.ByteSizeLong(), output, reportOptions,
            [&](const engine::QuantizationReportProgress& p) {
                if (!a.flag("json"))
                    std::fprintf(stderr, "[%d/%d] %s\n", p.done, p.total, p.step.c_str());
            });
        if (!built) throw UsageError(built.error().message);
        report = std::move(*built);
    }
    auto written = engine::writeQuantizedModel(*quantized, output, writeOptions);
    if (!written) throw UsageError(written.error().message);
    if (report) {
        engine::setQuantizedModelBytes(*report, written->totalBytes());
        if (auto st = engine::writeQuantizationReport(*report, *reportFolder); !st)
            throw UsageError(st.error().message);
    }

    if (a.flag("json")) {
        auto doc = summaryJson(*quantized, options, input, *written);
        if (report) doc["report"] = {{"folder", *reportFolder}, {"passed", report->passed}};
        printJson(doc);
    } else {
        printSummary(*quantized, input, *written);
        if (report) {
            for (const auto& o : report->outputs) {
                std::printf("  output %s: max abs error %.4g, cosine %.6f, SQNR %s", o.name.c_str(),
                            o.figures.maxAbsError, o.figures.cosine,
                            engine::formatSqnr(o.figures.sqnrDb).c_str());
                if (o.logits) std::printf(", top-1 agreement %.1f%%", 100 * o.top1Agreement);
                std::printf("\n");
            }
            if (report->benchmarked)
                std::printf("  median latency %.3f ms float, %.3f ms %s (%.2fx), %d threads\n",
                            report->floatLatency.medianMs, report->int8Latency.medianMs,
                            options.format == engine::QuantizationFormat::Int4 ? "int4" : "int8",
                            report->speedup, report->threads);
            std::printf("  %s: report.md and report.json in %s\n", report->passed ? "PASS" : "FAIL",
                        reportFolder->c_str());
        }
    }
    return report && !report->passed ? kExitCheckFailed : kExitOk;
}

}  // namespace

Command addQuantizeCommand(CLI::App& cli) {
    CLI::App* command =
        addCommand(cli, "quantize",
                   "dynamic int8 quantization of the weights of MatMul, Gemm and Conv nodes and of "
                   "embedding tables (Gather), or int4 (MatMulNBits) of MatMul weights");
    addPositional(*command, "MODEL", "the ONNX model file");
    addPositional(*command, "OUT", "the int8 model to write (.onnx)");
    addFlag(*command, "per-channel", "one scale per output channel instead of per tensor");
    addValueOption(*command, "op-types", "TYPES",
                   "the operator types to quantize, comma-separated, of MatMul, Gemm, Conv and "
                   "Gather (default MatMul,Gemm,Gather, as quantize_dynamic: Gather takes constant "
                   "embedding tables to uint8; int4: MatMul)");
    addRepeatedOption(*command, "exclude", "NODE", "leave this node in float");
    addValueOption(*command, "format", "qoperator|qdq|int4",
                   "integer operators, QuantizeLinear/DequantizeLinear pairs, or 4-bit "
                   "com.microsoft MatMulNBits weights of MatMul nodes (default qoperator)");
    addValueOption(*command, "block-size", "N",
                   "int4: weights per block along K, a power of two from 16 to 256 (default 32)");
    addFlag(*command, "symmetric", "int4: symmetric blocks, no zero points (the default)");
    addFlag(*command, "asymmetric", "int4: a uint8 zero point per block");
    addValueOption(*command, "accuracy-level", "0-4",
                   "int4: MatMulNBits' accuracy_level (default 0; 4 computes with int8 "
                   "activations)");
    addValueOption(*command, "external-data-threshold", "BYTES",
                   "write weights of at least BYTES to an external data file");
    addValueOption(*command, "report", "DIR",
                   "run both models, compare the outputs and write report.md and report.json to "
                   "DIR (exit 1 when a check fails)");
    addValueOption(*command, "min-sqnr", "DB", "the SQNR the report requires (default 20)");
    addValueOption(*command, "max-abs-error", "E",
                   "the largest absolute error the report allows (default: no limit)");
    addThreadsOption(*command);
    addValueOption(*command, "warmup", "N", "untimed runs of the report's timing (default 3)");
    addValueOption(*command, "runs", "N", "timed runs of the report's timing (default 20)");
    addFlag(*command, "no-bench", "leave the latency out of the report");
    addSeedOption(*command);
    addDimOption(*command);
    addJsonFlag(*command, "print one JSON document instead of the summary");
    return {command, runQuantize};
}

}  // namespace onnxlens::cli
