#include "onnxlens/model/ModelSummary.h"

#include <onnx/checker.h>

#include <algorithm>
#include <exception>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/ShapeInferenceAnyOpset.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

using TP = onnx::TensorProto;

// Bytes of data a tensor holds or points to (0 for strings, which are never stripped).
std::uint64_t storedBytes(const TP& tensor) {
    if (tensor.data_type() == TP::STRING) return 0;
    if (usesExternalData(tensor)) return UINT64_MAX;
    if (tensor.has_raw_data()) return tensor.raw_data().size();
    return static_cast<std::uint64_t>(tensor.float_data_size()) * 4 +
           tensor.double_data_size() * 8ull + tensor.int32_data_size() * 4ull +
           tensor.int64_data_size() * 8ull + tensor.uint64_data_size() * 8ull;
}

void copyTensorWithoutBulk(const TP& source, TP* target, std::size_t maxKeptBytes) {
    if (storedBytes(source) <= maxKeptBytes) {
        target->CopyFrom(source);
        return;
    }
    target->set_name(source.name());
    target->set_data_type(source.data_type());
    *target->mutable_dims() = source.dims();
    target->set_doc_string(source.doc_string());
    // The checker wants exactly one non-empty value field but does not compare its size with
    // the dims, so one element's worth of zero bytes stands in for the data.
    // A 0-element tensor must hold no data at all.
    if (elementCount(source).value_or(0) != 0)
        target->set_raw_data(
            std::string(std::max<std::size_t>(1, elementTypeSize(source.data_type())), '\0'));
}

void copyGraphWithoutBulk(const onnx::GraphProto& source, onnx::GraphProto* target,
                          std::size_t maxKeptBytes);

void copyNodeWithoutBulk(const onnx::NodeProto& source, onnx::NodeProto* target,
                         std::size_t maxKeptBytes) {
    *target->mutable_input() = source.input();
    *target->mutable_output() = source.output();
    target->set_name(source.name());
    target->set_op_type(source.op_type());
    target->set_domain(source.domain());
    target->set_doc_string(source.doc_string());
    for (const auto& attribute : source.attribute()) {
        auto* copy = target->add_attribute();
        const bool holdsData = attribute.has_t() || attribute.tensors_size() > 0 ||
                               attribute.has_g() || attribute.graphs_size() > 0;
        if (!holdsData) {
            copy->CopyFrom(attribute);
            continue;
        }
        copy->set_name(attribute.name());
        copy->set_type(attribute.type());
        copy->set_doc_string(attribute.doc_string());
        if (attribute.has_ref_attr_name()) copy->set_ref_attr_name(attribute.ref_attr_name());
        if (attribute.has_t())
            copyTensorWithoutBulk(attribute.t(), copy->mutable_t(), maxKeptBytes);
        for (const auto& t : attribute.tensors())
            copyTensorWithoutBulk(t, copy->add_tensors(), maxKeptBytes);
        if (attribute.has_g()) copyGraphWithoutBulk(attribute.g(), copy->mutable_g(), maxKeptBytes);
        for (const auto& g : attribute.graphs())
            copyGraphWithoutBulk(g, copy->add_graphs(), maxKeptBytes);
    }
}

void copyGraphWithoutBulk(const onnx::GraphProto& source, onnx::GraphProto* target,
                          std::size_t maxKeptBytes) {
    target->set_name(source.name());
    target->set_doc_string(source.doc_string());
    *target->mutable_input() = source.input();
    *target->mutable_output() = source.output();
    *target->mutable_value_info() = source.value_info();
    *target->mutable_quantization_annotation() = source.quantization_annotation();
    *target->mutable_sparse_initializer() = source.sparse_initializer();
    for (const auto& init : source.initializer())
        copyTensorWithoutBulk(init, target->add_initializer(), maxKeptBytes);
    for (const auto& node : source.node())
        copyNodeWithoutBulk(node, target->add_node(), maxKeptBytes);
}

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

void countKnownEdges(const onnx::GraphProto& graph, ShapeInferenceSummary& summary) {
    std::unordered_set<std::string> edges;
    for (const auto& node : graph.node())
        for (const auto& output : node.output())
            if (!output.empty()) edges.insert(output);
    std::unordered_set<std::string> known;
    auto note = [&](const onnx::ValueInfoProto& info) {
        if (edges.count(info.name()) && typeIsKnown(info.type())) known.insert(info.name());
    };
    for (const auto& info : graph.value_info()) note(info);
    for (const auto& info : graph.output()) note(info);
    summary.totalEdges = static_cast<std::int64_t>(edges.size());
    summary.knownEdges = static_cast<std::int64_t>(known.size());
}

InitializerSummary summarizeInitializers(const onnx::GraphProto& graph) {
    InitializerSummary summary;
    summary.count = graph.initializer_size();
    for (const auto& init : graph.initializer()) {
        const auto count = elementCount(init).value_or(0);
        summary.parameters += static_cast<std::int64_t>(count);
        if (init.data_type() == TP::STRING) {
            for (const auto& s : init.string_data())
                summary.bytes += static_cast<std::int64_t>(s.size());
        } else {
            summary.bytes += static_cast<std::int64_t>(count * elementTypeSize(init.data_type()));
        }
        if (usesExternalData(init)) ++summary.externalCount;
    }
    return summary;
}

}  // namespace

std::string displayDomain(const std::string& domain) {
    return domain.empty() || domain == "ai.onnx" ? "ai.onnx" : domain;
}

onnx::ModelProto copyWithoutBulkData(const onnx::ModelProto& model, std::size_t maxKeptBytes) {
    onnx::ModelProto copy;
    copy.set_ir_version(model.ir_version());
    *copy.mutable_opset_import() = model.opset_import();
    copy.set_producer_name(model.producer_name());
    copy.set_producer_version(model.producer_version());
    copy.set_domain(model.domain());
    copy.set_model_version(model.model_version());
    copy.set_doc_string(model.doc_string());
    *copy.mutable_metadata_props() = model.metadata_props();
    *copy.mutable_functions() = model.functions();
    *copy.mutable_training_info() = model.training_info();
    copyGraphWithoutBulk(model.graph(), copy.mutable_graph(), maxKeptBytes);
    return copy;
}

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
    adaptForOnnxLibrary(copy);
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
    if (!newer.problems.empty()) {
        verdict.ok = false;
        std::string problems;
        for (const auto& p : newer.problems) problems += (problems.empty() ? "" : "\n") + p;
        verdict.message = verdict.message.empty() ? problems : verdict.message + "\n" + problems;
    }
    return verdict;
}

namespace {

using OpsetVersions = std::unordered_map<std::string, int>;

OpsetVersions opsetVersions(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                            const OpsetVersions& fallback = {}) {
    OpsetVersions versions = fallback;
    for (const auto& o : imports)
        versions[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
    return versions;
}

Status checkNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                  const OpsetVersions& opsets, const std::string& where) {
    for (int i = 0; i < nodes.size(); ++i) {
        const auto& node = nodes[i];
        const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
        if (auto opset = opsets.find(domain); opset != opsets.end()) {
            const auto* schema =
                onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
            if (schema) {
                try {
                    schema->Verify(node);
                } catch (const std::exception& e) {
                    std::string message = e.what();
                    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
                        message.pop_back();
                    return makeError(where, "node '" + node.name() + "' (" + node.op_type() +
                                                ") does not match its schema: " + message);
                }
            }
        }
        for (const auto& attribute : node.attribute()) {
            if (attribute.has_g()) {
                auto status = checkNodes(attribute.g().node(), opsets, where);
                if (!status) return status;
            }
            for (const auto& g : attribute.graphs()) {
                auto status = checkNodes(g.node(), opsets, where);
                if (!status) return status;
            }
        }
    }
    return Ok{};
}

}  // namespace

Status checkNodesAgainstSchemas(const onnx::ModelProto& model) {
    const OpsetVersions opsets = opsetVersions(model.opset_import());
    auto status = checkNodes(model.graph().node(), opsets, "main graph");
    if (!status) return status;
    for (const auto& function : model.functions()) {
        status = checkNodes(function.node(), opsetVersions(function.opset_import(), opsets),
                            "function '" + function.name() + "'");
        if (!status) return status;
    }
    return Ok{};
}

ShapeInferenceSummary runShapeInference(const onnx::ModelProto& model) {
    ShapeInferenceSummary summary;
    onnx::ModelProto copy = copyWithoutBulkData(model);
    const ShapeInferenceOutcome outcome = inferShapesAnyOpset(copy);
    summary.ok = outcome.ok;
    summary.message = outcome.message;
    summary.shapedByOnnxlens = outcome.valuesShapedByOnnxlens;
    countKnownEdges(copy.graph(), summary);
    return summary;
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
    summary.shapeInference = runShapeInference(model);
    return summary;
}

}  // namespace onnxlens
