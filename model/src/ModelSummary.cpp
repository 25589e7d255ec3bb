#include "onnxlens/model/ModelSummary.h"

#include <onnx/checker.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "MicrosoftOpCosts.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInferenceAnyOpset.h"
#include "onnxlens/model/SymbolicShapePropagation.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

using TP = onnx::TensorProto;

ValueSummary summarizeValue(const onnx::ValueInfoProto& info) {
    ValueSummary value;
    value.name = info.name();
    value.docString = info.doc_string();
    value.dtype = typeName(info.type());
    const onnx::TensorShapeProto* shape = nullptr;
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
        shape = &info.type().tensor_type().shape();
    else if (info.type().has_sparse_tensor_type() && info.type().sparse_tensor_type().has_shape())
        shape = &info.type().sparse_tensor_type().shape();
    if (!shape) return value;
    value.hasShape = true;
    for (const auto& dim : shape->dim()) {
        DimSummary d;
        if (dim.has_dim_value()) {
            d.kind = DimSummary::Kind::Value;
            d.value = dim.dim_value();
        } else if (dim.has_dim_param()) {
            d.kind = DimSummary::Kind::Symbol;
            d.symbol = dim.dim_param();
        }
        value.shape.push_back(std::move(d));
    }
    return value;
}

void addDynamicAxes(const std::vector<ValueSummary>& values, std::vector<DynamicAxis>& axes) {
    for (const auto& value : values)
        for (std::size_t axis = 0; axis < value.shape.size(); ++axis)
            if (value.shape[axis].kind != DimSummary::Kind::Value)
                axes.push_back({value.name, static_cast<int>(axis), value.shape[axis].symbol});
}

struct GraphCounts {
    std::int64_t nodes = 0;
    std::int64_t subgraphs = 0;
};

void countNested(const onnx::GraphProto& graph, GraphCounts& counts) {
    counts.nodes += graph.node_size();
    for (const auto& node : graph.node())
        for (const auto& attribute : node.attribute()) {
            if (attribute.has_g()) {
                ++counts.subgraphs;
                countNested(attribute.g(), counts);
            }
            for (const auto& g : attribute.graphs()) {
                ++counts.subgraphs;
                countNested(g, counts);
            }
        }
}

bool typeIsKnown(const onnx::TypeProto& type) {
    if (type.has_tensor_type()) return type.tensor_type().has_shape();
    if (type.has_sparse_tensor_type()) return type.sparse_tensor_type().has_shape();
    return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

// Every dim a number or a symbol (not one inference made up for a dim it could not know).
bool typeIsComplete(const onnx::TypeProto& type, const GeneratedSymbols& generated) {
    if (!typeIsKnown(type)) return false;
    if (!type.has_tensor_type()) return true;
    for (const auto& d : type.tensor_type().shape().dim()) {
        if (d.has_dim_value()) continue;
        if (d.has_dim_param() && !d.dim_param().empty() && !generated.isGenerated(d.dim_param()))
            continue;
        return false;
    }
    return true;
}

void countKnownEdges(const onnx::GraphProto& graph, const GeneratedSymbols& generated,
                     ShapeInferenceSummary& summary) {
    std::unordered_set<std::string> edges;
    for (const auto& node : graph.node())
        for (const auto& output : node.output())
            if (!output.empty()) edges.insert(output);
    std::unordered_set<std::string> known, ranked;
    auto note = [&](const onnx::ValueInfoProto& info) {
        if (!edges.count(info.name())) return;
        if (typeIsKnown(info.type())) ranked.insert(info.name());
        if (typeIsComplete(info.type(), generated)) known.insert(info.name());
    };
    for (const auto& info : graph.value_info()) note(info);
    for (const auto& info : graph.output()) note(info);
    summary.totalEdges = static_cast<std::int64_t>(edges.size());
    summary.knownEdges = static_cast<std::int64_t>(known.size());
    summary.rankedEdges = static_cast<std::int64_t>(ranked.size());
}

// total += amount, held at the int64 maximum: a hostile file's dims can claim more elements
// than int64 holds, and a sum over many tensors can pass it.
void addClamped(std::int64_t& total, std::uint64_t amount) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    const auto current = static_cast<std::uint64_t>(std::max<std::int64_t>(total, 0));
    total = amount >= kMax - current ? std::numeric_limits<std::int64_t>::max()
                                     : static_cast<std::int64_t>(current + amount);
}

std::uint64_t tensorBytes(const onnx::TensorProto& t, std::uint64_t count) {
    if (t.data_type() != TP::STRING) return rawDataSize(t.data_type(), count);
    std::int64_t bytes = 0;
    for (const auto& s : t.string_data()) addClamped(bytes, s.size());
    return static_cast<std::uint64_t>(bytes);
}

// Weights that are not the main graph's initializers: tensors of Constant nodes (any graph) and
// the initializers of subgraphs.
void addConstantWeights(const onnx::GraphProto& graph, bool mainGraph,
                        InitializerSummary& summary) {
    auto add = [&](const onnx::TensorProto& t) {
        const auto count = elementCount(t).value_or(0);
        ++summary.constantCount;
        addClamped(summary.constantParameters, count);
        addClamped(summary.constantBytes, tensorBytes(t, count));
    };
    if (!mainGraph)
        for (const auto& init : graph.initializer()) add(init);
    for (const auto& node : graph.node()) {
        for (const auto& a : node.attribute()) {
            if (isOnnxOp(node, "Constant") && a.name() == "value" && a.has_t()) add(a.t());
            if (a.has_g()) addConstantWeights(a.g(), false, summary);
            for (const auto& g : a.graphs()) addConstantWeights(g, false, summary);
        }
    }
}

InitializerSummary summarizeInitializers(const onnx::GraphProto& graph) {
    InitializerSummary summary;
    summary.count = graph.initializer_size();
    std::unordered_map<std::string, const onnx::TensorProto*> byName;
    for (const auto& init : graph.initializer()) byName[init.name()] = &init;
    // MatMulNBits and GatherBlockQuantized weights count as weights, not as the uint8 bytes
    // that pack them.
    const auto packed = packedWeightsOf(graph, [&](const std::string& name) {
        std::optional<std::uint64_t> stored;
        auto it = byName.find(name);
        if (it != byName.end() && it->second->data_type() == TP::UINT8)
            stored = elementCount(*it->second);
        return stored;
    });
    for (const auto& init : graph.initializer()) {
        const auto count = elementCount(init).value_or(0);
        const auto weights = packed.find(init.name());
        addClamped(summary.parameters, weights != packed.end() ? weights->second.weights : count);
        addClamped(summary.bytes, tensorBytes(init, count));
        if (usesExternalData(init)) ++summary.externalCount;
    }
    addConstantWeights(graph, true, summary);
    return summary;
}

}  // namespace

CheckerVerdict runChecker(const onnx::ModelProto& model) {
    // Tensor data is not what the checker is for (it only counts value fields), and the
    // stripped copy keeps the memory of a 400 MB model flat. External files are checked by the
    // loader (ExternalData.h), so they are stripped here too: the checker would otherwise look
    // for them relative to the working directory.
    onnx::ModelProto copy = copyWithoutBulkData(model);
    CheckerVerdict verdict;
    // Nodes of opsets newer than the library's are checked by onnxlens; the library checks the
    // rest of the model (NewerOpsets.h).
    const NewerOpsetReport newer = checkNewerOpsetNodes(model);
    // com.microsoft nodes are verified by the checker against the schemas onnxlens registers;
    // ONNX Runtime's default-domain extensions are a failure of their own, reported below, and
    // moved aside so that the checker goes on with the rest of the model.
    const MicrosoftCheckReport microsoft = checkMicrosoftNodes(model);
    moveOrtOnnxDomainExtensions(copy);
    adaptForOnnxLibrary(copy);
    verdict.microsoftNote = describeMicrosoftCheck(microsoft);
    verdict.checkedByOnnxlensSchemas = microsoft.checkedByOp;
    verdict.notChecked = microsoft.notChecked;
    verdict.ortExtensionNodes = microsoft.ortExtensionNodes;
    verdict.note = describeNewerOpsetCheck(newer);
    verdict.nodesCheckedByOnnxlens = static_cast<std::int64_t>(newer.nodes.size());
    if (newer.opsetNewerThanOnnxlens)
        verdict.newerOpsetWarning = "ai.onnx opset " + std::to_string(newer.modelOpset) +
                                    " is newer than this build knows (the onnx library: " +
                                    std::to_string(onnxLibraryOpset()) +
                                    ", onnxlens: " + std::to_string(newestOpsetKnownToOnnxlens()) +
                                    "); its nodes were checked as of opset " +
                                    std::to_string(newestOpsetKnownToOnnxlens());
    try {
        onnx::checker::check_model(copy);
        verdict.ok = true;
    } catch (const std::exception& e) {
        verdict.message = e.what();
        while (!verdict.message.empty() &&
               (verdict.message.back() == '\n' || verdict.message.back() == ' '))
            verdict.message.pop_back();
    }
    std::vector<std::string> found = newer.problems;
    found.insert(found.end(), microsoft.problems.begin(), microsoft.problems.end());
    if (const std::string extensions = describeOrtExtensionNodes(microsoft); !extensions.empty())
        found.push_back(extensions);
    if (!found.empty()) {
        verdict.ok = false;
        std::string problems;
        for (const auto& p : found) problems += (problems.empty() ? "" : "\n") + p;
        verdict.message = verdict.message.empty() ? problems : verdict.message + "\n" + problems;
    }
    return verdict;
}

ShapeInferenceSummary summarizeShapeInference(const onnx::ModelProto& model,
                                              const InferredShapes& shapes) {
    // The inferred copy has the same nodes; the model's own dims tell the made-up ones apart.
    ShapeInferenceSummary summary;
    summary.ok = shapes.ok();
    summary.message = shapes.message();
    summary.shapedByOnnxlens = shapes.valuesShapedByOnnxlens();
    summary.shapedBySymbolicPropagation = shapes.valuesShapedBySymbolicPropagation();
    countKnownEdges(shapes.model().graph(), GeneratedSymbols(model), summary);
    return summary;
}

ShapeInferenceSummary runShapeInference(const onnx::ModelProto& model) {
    return summarizeShapeInference(model, *inferShapes(model));
}

Result<ModelSummary> summarizeModel(const LoadedModel& loaded) {
    if (!loaded.proto) return makeError(loaded.path.string(), "no model loaded");
    const onnx::ModelProto& model = *loaded.proto;
    const onnx::GraphProto& graph = model.graph();
    ModelSummary summary;
    summary.path = loaded.path;
    summary.fileBytes = loaded.fileBytes;
    summary.irVersion = model.ir_version();
    summary.producerName = model.producer_name();
    summary.producerVersion = model.producer_version();
    summary.domain = model.domain();
    summary.modelVersion = model.model_version();
    summary.docString = model.doc_string();
    for (const auto& opset : model.opset_import())
        summary.opsets.push_back({opset.domain(), opset.version()});
    for (const auto& prop : model.metadata_props())
        summary.metadata.emplace_back(prop.key(), prop.value());

    std::unordered_set<std::string> initializerNames;
    for (const auto& init : graph.initializer()) initializerNames.insert(init.name());
    for (const auto& input : graph.input())
        if (!initializerNames.count(input.name())) summary.inputs.push_back(summarizeValue(input));
    for (const auto& output : graph.output()) summary.outputs.push_back(summarizeValue(output));
    addDynamicAxes(summary.inputs, summary.dynamicAxes);
    addDynamicAxes(summary.outputs, summary.dynamicAxes);

    summary.nodeCount = graph.node_size();
    for (const auto& node : graph.node())
        ++summary.opHistogram[displayDomain(node.domain()) + "::" + node.op_type()];
    GraphCounts counts;
    countNested(graph, counts);
    summary.nodeCountWithSubgraphs = counts.nodes;
    summary.subgraphCount = counts.subgraphs;
    summary.initializers = summarizeInitializers(graph);
    for (const auto& function : model.functions()) {
        FunctionSummary f;
        f.domain = function.domain();
        f.name = function.name();
        f.inputs.assign(function.input().begin(), function.input().end());
        f.outputs.assign(function.output().begin(), function.output().end());
        f.nodeCount = function.node_size();
        summary.functions.push_back(std::move(f));
    }
    summary.checker = runChecker(model);
    summary.shapeInference = summarizeShapeInference(
        model, loaded.shapes ? *loaded.shapes->get(model) : *inferShapes(model));
    return summary;
}

}  // namespace onnxlens
