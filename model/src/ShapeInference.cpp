#include "onnxlens/model/ShapeInference.h"

#include <onnx/defs/schema.h>

#include <atomic>
#include <exception>
#include <functional>

#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInferenceAnyOpset.h"
#include "onnxlens/model/StructuralCopy.h"

namespace onnxlens {

namespace {

using OpsetVersions = std::unordered_map<std::string, int>;

OpsetVersions opsetVersions(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    const OpsetVersions& fallback = {}) {
    OpsetVersions versions = fallback;
    for (const auto& o : imports)
        versions[canonicalDomain(o.domain())] = static_cast<int>(o.version());
    return versions;
}

Status checkNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                  const OpsetVersions& opsets, const std::string& where) {
    for (int i = 0; i < nodes.size(); ++i) {
        const auto& node = nodes[i];
        const std::string domain = canonicalDomain(node.domain());
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
    registerMicrosoftOpSchemas();
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

namespace {

std::atomic<std::uint64_t> inferenceRuns{0};

}  // namespace

std::shared_ptr<const InferredShapes> inferShapes(const onnx::ModelProto& model) {
    ++inferenceRuns;
    auto result = std::make_shared<InferredShapes>();
    auto copy = std::make_shared<onnx::ModelProto>(copyWithoutBulkData(model));
    const ShapeInferenceOutcome outcome = inferShapesAnyOpset(*copy);
    result->ok_ = outcome.ok;
    result->skipped_ = outcome.skipped;
    result->message_ = outcome.message;
    result->valuesShapedByOnnxlens_ = outcome.valuesShapedByOnnxlens;
    result->valuesShapedBySymbolicPropagation_ = outcome.valuesShapedBySymbolicPropagation;
    auto collect = [&](const auto& values) {
        for (const auto& v : values) result->types_[v.name()] = v.type();
    };
    // Subgraphs first, so that the main graph's names win.
    std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& g) {
        for (const auto& n : g.node())
            for (const auto& a : n.attribute()) {
                if (a.has_g()) walk(a.g());
                for (const auto& sg : a.graphs()) walk(sg);
            }
        collect(g.value_info());
        collect(g.input());
        collect(g.output());
        for (const auto& init : g.initializer()) {
            onnx::TypeProto t;
            t.mutable_tensor_type()->set_elem_type(init.data_type());
            auto* shape = t.mutable_tensor_type()->mutable_shape();
            for (auto d : init.dims()) shape->add_dim()->set_dim_value(d);
            result->types_[init.name()] = std::move(t);
        }
    };
    walk(copy->graph());
    result->model_ = std::move(copy);
    return result;
}

const onnx::TypeProto* InferredShapes::typeOf(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? nullptr : &it->second;
}

std::optional<std::vector<InferredDim>> InferredShapes::dimsOf(const std::string& name) const {
    const auto* type = typeOf(name);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
    std::vector<InferredDim> dims;
    for (const auto& d : type->tensor_type().shape().dim()) {
        if (d.has_dim_value())
            dims.push_back({d.dim_value(), {}});
        else if (d.has_dim_param() && !d.dim_param().empty())
            dims.push_back({-1, d.dim_param()});
        else
            return std::nullopt;
    }
    return dims;
}

std::optional<std::vector<std::int64_t>> InferredShapes::staticDimsOf(
    const std::string& name) const {
    auto dims = dimsOf(name);
    if (!dims) return std::nullopt;
    std::vector<std::int64_t> values;
    for (const auto& d : *dims) {
        if (d.value < 0) return std::nullopt;
        values.push_back(d.value);
    }
    return values;
}

std::uint64_t shapeInferenceRunCount() { return inferenceRuns.load(); }

std::shared_ptr<const InferredShapes> ShapeInferenceCache::get(const onnx::ModelProto& model) {
    std::lock_guard lock(mutex_);
    if (!shapes_) shapes_ = inferShapes(model);
    return shapes_;
}

std::shared_ptr<const InferredShapes> ShapeInferenceCache::peek() const {
    std::lock_guard lock(mutex_);
    return shapes_;
}

void ShapeInferenceCache::invalidate() {
    std::lock_guard lock(mutex_);
    shapes_.reset();
}

}  // namespace onnxlens
