// `onnxlens-cli info MODEL [--json]`: the model summary as a report or one JSON document.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "CliCommon.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/workflows/DecoderModel.h"

namespace onnxlens::cli {

namespace {

nlohmann::json dimJson(const DimSummary& dim) {
    switch (dim.kind) {
        case DimSummary::Kind::Value:
            return dim.value;
        case DimSummary::Kind::Symbol:
            return dim.symbol;
        default:
            return nullptr;
    }
}

nlohmann::json valuesJson(const std::vector<ValueSummary>& values) {
    auto list = nlohmann::json::array();
    for (const auto& value : values) {
        nlohmann::json shape = nullptr;
        if (value.hasShape) {
            shape = nlohmann::json::array();
            for (const auto& dim : value.shape) shape.push_back(dimJson(dim));
        }
        list.push_back({{"name", value.name}, {"dtype", value.dtype}, {"shape", shape}});
    }
    return list;
}

nlohmann::json summaryJson(const ModelSummary& s) {
    nlohmann::json doc;
    doc["model"] = s.path.string();
    doc["file_bytes"] = s.fileBytes;
    doc["ir_version"] = s.irVersion;
    doc["producer_name"] = s.producerName;
    doc["producer_version"] = s.producerVersion;
    doc["domain"] = s.domain;
    doc["model_version"] = s.modelVersion;
    doc["doc_string"] = s.docString;
    doc["opset_import"] = nlohmann::json::array();
    for (const auto& opset : s.opsets)
        doc["opset_import"].push_back({{"domain", opset.domain}, {"version", opset.version}});
    doc["inputs"] = valuesJson(s.inputs);
    doc["outputs"] = valuesJson(s.outputs);
    doc["dynamic_axes"] = nlohmann::json::array();
    for (const auto& axis : s.dynamicAxes)
        doc["dynamic_axes"].push_back(
            {{"tensor", axis.tensor},
             {"axis", axis.axis},
             {"symbol",
              axis.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(axis.symbol)}});
    doc["node_count"] = s.nodeCount;
    doc["node_count_with_subgraphs"] = s.nodeCountWithSubgraphs;
    doc["op_histogram"] = nlohmann::json::object();
    for (const auto& [op, count] : s.opHistogram) doc["op_histogram"][op] = count;
    doc["initializers"] = {{"count", s.initializers.count},
                           {"parameters", s.initializers.parameters},
                           {"bytes", s.initializers.bytes},
                           {"external", s.initializers.externalCount}};
    // Weights held by Constant nodes and subgraph initializers.
    doc["constants"] = {{"count", s.initializers.constantCount},
                        {"parameters", s.initializers.constantParameters},
                        {"bytes", s.initializers.constantBytes}};
    doc["metadata_props"] = nlohmann::json::object();
    for (const auto& [key, value] : s.metadata) doc["metadata_props"][key] = value;
    doc["functions"] = nlohmann::json::array();
    for (const auto& f : s.functions)
        doc["functions"].push_back({{"domain", f.domain},
                                    {"name", f.name},
                                    {"inputs", f.inputs},
                                    {"outputs", f.outputs},
                                    {"node_count", f.nodeCount}});
    doc["subgraphs"] = s.subgraphCount;
    doc["checker"] = checkerJson(s.checker);
    doc["shape_inference"] = {
        {"ok", s.shapeInference.ok},
        {"message", s.shapeInference.message},
        {"known_edges", s.shapeInference.knownEdges},
        {"total_edges", s.shapeInference.totalEdges},
        {"ranked_edges", s.shapeInference.rankedEdges},
        {"shaped_by_symbolic_propagation", s.shapeInference.shapedBySymbolicPropagation},
        {"shaped_by_onnxlens_rules", s.shapeInference.shapedByOnnxlens}};
    return doc;
}

std::string humanBytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return text;
}

std::string shapeText(const ValueSummary& value) {
    if (!value.hasShape) return "?";
    std::string text = "[";
    for (std::size_t i = 0; i < value.shape.size(); ++i) {
        if (i) text += ", ";
        const auto& dim = value.shape[i];
        text += dim.kind == DimSummary::Kind::Value    ? std::to_string(dim.value)
                : dim.kind == DimSummary::Kind::Symbol ? dim.symbol
                                                       : std::string("?");
    }
    return text + "]";
}

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

void printField(std::ostream& out, const std::string& label, const std::string& value) {
    out << "  " << std::left << std::setw(18) << label << value << "\n";
}

void printValues(std::ostream& out, const std::string& title,
                 const std::vector<ValueSummary>& values) {
    out << "\n" << title << " (" << values.size() << ")\n";
    std::size_t nameWidth = 4, typeWidth = 5;
    for (const auto& v : values) {
        nameWidth = std::max(nameWidth, v.name.size());
        typeWidth = std::max(typeWidth, v.dtype.size());
    }
    for (const auto& v : values)
        out << "  " << std::left << std::setw(static_cast<int>(nameWidth + 2)) << v.name
            << std::setw(static_cast<int>(typeWidth + 2)) << v.dtype << shapeText(v) << "\n";
}

void printReport(std::ostream& out, const ModelSummary& s) {
    out << "Model " << s.path.string() << " (" << humanBytes(s.fileBytes) << ")\n";
    printField(out, "IR version", std::to_string(s.irVersion));
    std::string producer = s.producerName;
    if (!s.producerVersion.empty()) producer += " " + s.producerVersion;
    printField(out, "Producer", producer.empty() ? "(unknown)" : producer);
    if (!s.domain.empty()) printField(out, "Domain", s.domain);
    if (s.modelVersion != 0) printField(out, "Model version", std::to_string(s.modelVersion));
    if (!s.docString.empty()) printField(out, "Doc string", firstLine(s.docString));
    std::string opsets;
    for (const auto& o : s.opsets)
        opsets += (opsets.empty() ? "" : ", ") + displayDomain(o.domain) + " " +
                  std::to_string(o.version);
    printField(out, "Opsets", opsets.empty() ? "(none)" : opsets);

    printValues(out, "Inputs", s.inputs);
    printValues(out, "Outputs", s.outputs);
    if (!s.dynamicAxes.empty()) {
        out << "\nDynamic axes (" << s.dynamicAxes.size() << ")\n";
        for (const auto& a : s.dynamicAxes)
            out << "  " << a.tensor << " axis " << a.axis << ": "
                << (a.symbol.empty() ? std::string("? (unnamed)") : a.symbol) << "\n";
    }

    out << "\nGraph\n";
    std::string nodes = std::to_string(s.nodeCount);
    if (s.nodeCountWithSubgraphs != s.nodeCount)
        nodes += " (" + std::to_string(s.nodeCountWithSubgraphs) + " including subgraphs)";
    printField(out, "Nodes", nodes);
    printField(out, "Subgraphs", std::to_string(s.subgraphCount));
    std::string inits = std::to_string(s.initializers.count) + ", " +
                        std::to_string(s.initializers.parameters) + " parameters, " +
                        humanBytes(static_cast<std::uint64_t>(s.initializers.bytes));
    if (s.initializers.externalCount)
        inits += " (" + std::to_string(s.initializers.externalCount) + " in external data)";
    printField(out, "Initializers", inits);
    if (s.initializers.constantCount)
        printField(out, "Constants",
                   std::to_string(s.initializers.constantCount) + ", " +
                       std::to_string(s.initializers.constantParameters) + " parameters, " +
                       humanBytes(static_cast<std::uint64_t>(s.initializers.constantBytes)) +
                       " (Constant nodes, subgraph initializers)");
    printField(out, "Local functions", std::to_string(s.functions.size()));
    for (const auto& f : s.functions)
        out << "    " << displayDomain(f.domain) << "::" << f.name << " (" << f.nodeCount
            << " nodes)\n";

    if (!s.opHistogram.empty()) {
        std::vector<std::pair<std::string, std::int64_t>> ops(s.opHistogram.begin(),
                                                              s.opHistogram.end());
        std::stable_sort(ops.begin(), ops.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        std::size_t width = 0;
        for (const auto& [op, n] : ops) width = std::max(width, op.size());
        out << "\nOperators (" << ops.size() << " types)\n";
        for (const auto& [op, n] : ops)
            out << "  " << std::left << std::setw(static_cast<int>(width + 2)) << op << std::right
                << std::setw(6) << n << "\n";
    }
    if (!s.metadata.empty()) {
        out << "\nMetadata\n";
        for (const auto& [key, value] : s.metadata) printField(out, key, firstLine(value));
    }
    out << "\nValidation\n";
    printField(out, "Checker", s.checker.ok ? "ok" : "FAILED: " + firstLine(s.checker.message));
    for (const auto& line : checkerNoteLines(s.checker)) printField(out, "", line);
    if (!s.checker.newerOpsetWarning.empty())
        printField(out, "", "warning: " + s.checker.newerOpsetWarning);
    std::string inferred = std::to_string(s.shapeInference.knownEdges) + "/" +
                           std::to_string(s.shapeInference.totalEdges) +
                           " edges with a known shape";
    // Edges whose rank is known but some dim is not (shown as ?).
    if (s.shapeInference.rankedEdges > s.shapeInference.knownEdges)
        inferred += ", " + std::to_string(s.shapeInference.rankedEdges) + " with a known rank";
    printField(out, "Shape inference",
               s.shapeInference.ok
                   ? "ok, " + inferred
                   : "FAILED: " + firstLine(s.shapeInference.message) + " (" + inferred + ")");
    if (s.shapeInference.shapedByOnnxlens > 0)
        printField(out, "",
                   std::to_string(s.shapeInference.shapedByOnnxlens) +
                       " node outputs of newer opsets shaped by onnxlens's rules");
}

// The KV cache of a decoder (generate runs it), after the report's other sections.
void printKvCache(std::ostream& out, const Result<engine::DecoderModel>& decoder) {
    if (!decoder) return;
    const auto& d = *decoder;
    out << "\nKV cache (decoder: onnxlens-cli generate runs it)\n";
    const auto number = [](std::int64_t v) { return v > 0 ? std::to_string(v) : std::string("?"); };
    printField(out, "Layers",
               std::to_string(d.layers) + ", " + number(d.heads) + " kv heads x " +
                   number(d.headSize) + ", " + engine::dataTypeName(d.cacheType));
    printField(out, "Layout",
               std::string(d.stacked ? "stacked" : "separate") + " (" + d.naming + "), " +
                   std::to_string(d.cache.size()) + " past/present pairs");
    const auto symbol = [](const std::string& s) { return s.empty() ? std::string("?") : s; };
    printField(out, "Dims",
               "batch " + symbol(d.batchSymbol) + ", past " + symbol(d.pastSymbol) + ", sequence " +
                   symbol(d.sequenceSymbol));
    printField(out, "Per token",
               d.bytesPerToken ? humanBytes(d.bytesPerToken) + " of cache per token of context"
                               : std::string("? (a cache dim is not a number)"));
    std::string inputs = d.inputIds;
    if (!d.attentionMask.empty()) inputs += ", " + d.attentionMask;
    if (!d.positionIds.empty()) inputs += ", " + d.positionIds;
    printField(out, "Inputs", inputs + "; logits " + d.logits);
}

int runInfo(const Arguments& arguments) {
    auto loaded = loadModel(arguments.positionals()[0]);
    if (!loaded) throw UsageError(loaded.error().message);
    auto summary = summarizeModel(*loaded);
    if (!summary) throw UsageError(summary.error().message);
    const auto decoder = engine::recognizeDecoder(loaded->proto->graph());
    if (arguments.flag("json")) {
        auto doc = summaryJson(*summary);
        doc["kv_cache"] = decoder ? engine::decoderModelJson(*decoder) : nlohmann::json(nullptr);
        printJson(doc);
    } else {
        printReport(std::cout, *summary);
        printKvCache(std::cout, decoder);
    }
    return kExitOk;
}

}  // namespace

Command addInfoCommand(CLI::App& cli) {
    CLI::App* command = addCommand(
        cli, "info", "the model summary: inputs, outputs, opsets, operators, weights, checker");
    addPositional(*command, "MODEL", "the ONNX model file");
    addJsonFlag(*command, "print one JSON document instead of the report");
    return {command, runInfo};
}

}  // namespace onnxlens::cli
