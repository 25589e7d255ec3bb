#include "onnxlens/model/StructuralCopy.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "onnxlens/model/ExternalData.h"
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

}  // namespace

void copyModelFieldsButGraph(const onnx::ModelProto& model, onnx::ModelProto& copy) {
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
}

onnx::ModelProto copyWithoutBulkData(const onnx::ModelProto& model, std::size_t maxKeptBytes) {
    onnx::ModelProto copy;
    copyModelFieldsButGraph(model, copy);
    copyGraphWithoutBulk(model.graph(), copy.mutable_graph(), maxKeptBytes);
    return copy;
}

onnx::ModelProto copyStructure(onnx::ModelProto& model) {
    auto& initializers = *model.mutable_graph()->mutable_initializer();
    google::protobuf::RepeatedPtrField<TP> held;
    held.Swap(&initializers);
    onnx::ModelProto copy = model;
    initializers.Swap(&held);
    for (const auto& init : initializers) {
        auto* kept = copy.mutable_graph()->add_initializer();
        kept->set_name(init.name());
        kept->set_data_type(init.data_type());
        *kept->mutable_dims() = init.dims();
    }
    return copy;
}

}  // namespace onnxlens
