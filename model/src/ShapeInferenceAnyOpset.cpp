#include "onnxlens/model/ShapeInferenceAnyOpset.h"

#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <exception>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInferenceGuard.h"
#include "onnxlens/model/ShapeRules.h"
#include "onnxlens/model/SymbolicShapePropagation.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

bool typeHasShape(const onnx::TypeProto& type) {
    if (type.has_tensor_type()) return type.tensor_type().has_shape();
    return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

// Values of a small int/float tensor; nullopt for other types or more than a few thousand
// elements (shape inputs are short).
std::optional<std::vector<double>> tensorValues(const onnx::TensorProto& tensor) {
    std::vector<double> values;
    if (!visitSmallTensor(tensor, 4096, [&](auto v) { values.push_back(static_cast<double>(v)); }))
        return std::nullopt;
    return values;
}

class GraphTypes {
  public:
    explicit GraphTypes(const onnx::GraphProto& graph) {
        for (const auto& init : graph.initializer()) {
            onnx::TypeProto type;
            auto* tensor = type.mutable_tensor_type();
            tensor->set_elem_type(init.data_type());
            auto* shape = tensor->mutable_shape();
            for (auto d : init.dims()) shape->add_dim()->set_dim_value(d);
            types_[init.name()] = type;
            constants_[init.name()] = &init;
        }
        auto note = [&](const onnx::ValueInfoProto& v) {
            if (v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
                types_[v.name()] = v.type();
        };
        for (const auto& v : graph.input()) note(v);
        for (const auto& v : graph.value_info()) note(v);
        for (const auto& v : graph.output()) note(v);
        for (const auto& node : graph.node()) {
            if (node.op_type() != "Constant" || node.output_size() != 1 || !isDefaultDomain(node))
                continue;
            for (const auto& a : node.attribute()) {
                if (a.name() == "value" && a.has_t()) constants_[node.output(0)] = &a.t();
                if (a.name() == "value_ints") {
                    std::vector<double> v(a.ints().begin(), a.ints().end());
                    listConstants_[node.output(0)] = v;
                }
                if (a.name() == "value_int") listConstants_[node.output(0)] = {double(a.i())};
                if (a.name() == "value_floats") {
                    std::vector<double> v(a.floats().begin(), a.floats().end());
                    listConstants_[node.output(0)] = v;
                }
                if (a.name() == "value_float") listConstants_[node.output(0)] = {double(a.f())};
            }
        }
    }

    const onnx::TypeProto* type(const std::string& name) const {
        auto it = types_.find(name);
        return it == types_.end() ? nullptr : &it->second;
    }
    std::optional<std::vector<double>> constant(const std::string& name) const {
        if (auto it = listConstants_.find(name); it != listConstants_.end()) return it->second;
        if (auto it = constants_.find(name); it != constants_.end())
            return tensorValues(*it->second);
        return std::nullopt;
    }

  private:
    std::unordered_map<std::string, onnx::TypeProto> types_;
    std::unordered_map<std::string, const onnx::TensorProto*> constants_;
    std::unordered_map<std::string, std::vector<double>> listConstants_;
};

// One round over the placeholder nodes of `graph` (and its subgraphs): the outputs the rules can
// type now are added to value_info (or to the graph output's type). Returns how many.
std::int64_t applyShapeRules(onnx::GraphProto& graph, int opset, std::set<std::string>& shaped) {
    std::int64_t added = 0;
    const GraphTypes types(graph);
    std::unordered_map<std::string, int> outputIndex;
    for (int i = 0; i < graph.output_size(); ++i) outputIndex[graph.output(i).name()] = i;
    for (auto& node : *graph.mutable_node()) {
        for (auto& attribute : *node.mutable_attribute()) {
            if (attribute.has_g()) added += applyShapeRules(*attribute.mutable_g(), opset, shaped);
            for (auto& g : *attribute.mutable_graphs()) added += applyShapeRules(g, opset, shaped);
        }
        if (node.domain() != kNewerOpsetPlaceholderDomain) continue;
        bool pending = false;
        for (const auto& out : node.output())
            if (!out.empty() && !(types.type(out) && typeHasShape(*types.type(out))))
                pending = true;
        if (!pending) continue;
        ShapeRuleInputs inputs;
        for (const auto& in : node.input())
            inputs.types.push_back(in.empty() ? nullptr : types.type(in));
        inputs.constantValues = [&](int i) -> std::optional<std::vector<double>> {
            if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
            return types.constant(node.input(i));
        };
        onnx::NodeProto asDefault = node;
        asDefault.set_domain("");
        const auto outputs = inferWithShapeRules(asDefault, opset, inputs);
        for (int k = 0; k < node.output_size() && k < static_cast<int>(outputs.size()); ++k) {
            const std::string& name = node.output(k);
            if (name.empty() || outputs[k].value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
            if (types.type(name) && typeHasShape(*types.type(name))) continue;
            if (auto it = outputIndex.find(name); it != outputIndex.end()) {
                auto* declared = graph.mutable_output(it->second)->mutable_type();
                // A declared element type stays; the rule adds the shape.
                if (declared->has_tensor_type() && outputs[k].has_tensor_type()) {
                    *declared->mutable_tensor_type()->mutable_shape() =
                        outputs[k].tensor_type().shape();
                    if (declared->tensor_type().elem_type() == 0)
                        declared->mutable_tensor_type()->set_elem_type(
                            outputs[k].tensor_type().elem_type());
                } else if (declared->value_case() == onnx::TypeProto::VALUE_NOT_SET) {
                    *declared = outputs[k];
                }
            } else {
                auto* info = graph.add_value_info();
                info->set_name(name);
                *info->mutable_type() = outputs[k];
            }
            // A rerun of inference may drop an incomplete type (applySymbolicHints) and the rule
            // add it again: progress is a value never shaped before.
            if (shaped.insert(name).second) ++added;
        }
    }
    return added;
}

// Copies what inference found in `from` (same structure, nodes possibly in another domain)
// into `to`: value_info and the types of graph outputs, in every subgraph.
void copyInferredTypes(const onnx::GraphProto& from, onnx::GraphProto& to) {
    *to.mutable_value_info() = from.value_info();
    for (int i = 0; i < to.output_size() && i < from.output_size(); ++i)
        *to.mutable_output(i)->mutable_type() = from.output(i).type();
    for (int n = 0; n < to.node_size() && n < from.node_size(); ++n) {
        auto* node = to.mutable_node(n);
        const auto& source = from.node(n);
        for (int a = 0; a < node->attribute_size() && a < source.attribute_size(); ++a) {
            auto* attribute = node->mutable_attribute(a);
            const auto& sourceAttribute = source.attribute(a);
            if (attribute->has_g() && sourceAttribute.has_g())
                copyInferredTypes(sourceAttribute.g(), *attribute->mutable_g());
            for (int g = 0; g < attribute->graphs_size() && g < sourceAttribute.graphs_size(); ++g)
                copyInferredTypes(sourceAttribute.graphs(g), *attribute->mutable_graphs(g));
        }
    }
}

}  // namespace

ShapeInferenceOutcome inferShapesAnyOpset(onnx::ModelProto& model) {
    ShapeInferenceOutcome outcome;
    registerMicrosoftOpSchemas();
    // ONNX Runtime's default-domain extensions are typed by their placeholder schemas
    // (MicrosoftOpSchemas.h), the newer opsets' nodes by ShapeRules.
    const auto libraryCopy = [&model] {
        onnx::ModelProto copy = model;
        moveOrtOnnxDomainExtensions(copy);
        return copy;
    };
    onnx::ModelProto adapted = libraryCopy();
    const bool newer = adaptForOnnxLibrary(adapted);
    if (auto safe = checkNodesAgainstSchemas(adapted); !safe) {
        outcome.skipped = true;
        outcome.message = "skipped: " + safe.error().message;
        return outcome;
    }
    // onnx's inference functions trust attribute values (ShapeInferenceGuard.h).
    guardShapeInference();
    auto infer = [&](int errorMode) {
        onnx::shape_inference::InferShapes(adapted, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, errorMode, true));
    };
    try {
        infer(1);
        outcome.ok = true;
    } catch (const std::exception& e) {
        outcome.message = trimmed(e.what());
        // Strict mode stops at the first node it cannot infer; the lenient mode infers what it
        // can, which is what the edge counts describe.
        adapted = libraryCopy();
        adaptForOnnxLibrary(adapted);
        try {
            infer(0);
        } catch (const std::exception&) {
            adapted = libraryCopy();
            adaptForOnnxLibrary(adapted);
        }
    }
    // Each round types the placeholder nodes whose inputs are typed (ShapeRules) and fills the
    // dims the shape-computing subgraph determines (SymbolicShapePropagation), then lets onnx carry
    // those types on through the nodes it knows.
    const int opset = std::min(opsetVersion(model, "", 0), newestOpsetKnownToOnnxlens());
    const GeneratedSymbols generated(model);
    std::set<std::string> shapedByRules;
    std::map<std::string, onnx::TypeProto> hints;
    for (int round = 0; round < 64; ++round) {
        const std::int64_t added =
            newer ? applyShapeRules(*adapted.mutable_graph(), opset, shapedByRules) : 0;
        outcome.valuesShapedByOnnxlens += added;
        bool hinted = false;
        for (auto& [name, type] : propagateSymbolicShapes(adapted, generated)) {
            auto& known = hints[name];
            if (known.SerializeAsString() == type.SerializeAsString()) continue;
            known = std::move(type);
            hinted = true;
        }
        if (added == 0 && !hinted) break;
        if (hinted) applySymbolicHints(adapted, hints, generated);
        try {
            infer(0);
        } catch (const std::exception&) {
            break;
        }
    }
    outcome.valuesShapedBySymbolicPropagation = static_cast<std::int64_t>(hints.size());
    copyInferredTypes(adapted.graph(), *model.mutable_graph());
    return outcome;
}

}  // namespace onnxlens
