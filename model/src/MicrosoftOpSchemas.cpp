#include "onnxlens/model/MicrosoftOpSchemas.h"

#include <onnx/defs/data_type_utils.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <unordered_map>

#include "MicrosoftOpSchemaSupport.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace ms {

namespace {

std::vector<std::string>& registeredNames() {
    static std::vector<std::string> names;
    return names;
}

}  // namespace

onnx::OpSchema schema(const char* name, const char* domain, int line) {
    onnx::OpSchema s(name, "onnxlens/model/src/MicrosoftOpSchemas", line);
    s.SetDomain(domain).SinceVersion(1);
    if (std::strcmp(domain, kMicrosoftDomain) == 0) registeredNames().emplace_back(name);
    return s;
}

const std::vector<std::string>& floatTypes() {
    static const std::vector<std::string> types{"tensor(float)", "tensor(float16)",
                                                "tensor(bfloat16)"};
    return types;
}

const std::vector<std::string>& floatTypesDouble() {
    static const std::vector<std::string> types{"tensor(float)", "tensor(float16)",
                                                "tensor(bfloat16)", "tensor(double)"};
    return types;
}

const std::vector<std::string>& int8Types() {
    static const std::vector<std::string> types{"tensor(int8)", "tensor(uint8)"};
    return types;
}

Dim known(std::int64_t value) {
    Dim d;
    d.set_dim_value(value);
    return d;
}

Dim unknown() { return Dim{}; }

Dim sum(const Dim& a, const Dim& b) {
    if (a.has_dim_value() && b.has_dim_value()) {
        const std::int64_t x = a.dim_value(), y = b.dim_value();
        if (x >= 0 && y >= 0 && x <= INT64_MAX - y) return known(x + y);
        return unknown();
    }
    auto text = [](const Dim& d) {
        return d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param();
    };
    if ((a.has_dim_param() && !a.dim_param().empty()) ||
        (b.has_dim_param() && !b.dim_param().empty())) {
        if ((a.has_dim_value() || a.has_dim_param()) && (b.has_dim_value() || b.has_dim_param())) {
            Dim d;
            d.set_dim_param(text(a) + " + " + text(b));
            return d;
        }
    }
    return unknown();
}

Dim times(const Dim& d, std::int64_t k) {
    if (k <= 0 || !d.has_dim_value() || d.dim_value() < 0) return unknown();
    if (d.dim_value() > INT64_MAX / k) return unknown();
    return known(d.dim_value() * k);
}

Dim dividedBy(const Dim& d, std::int64_t k) {
    if (k <= 0 || !d.has_dim_value() || d.dim_value() < 0 || d.dim_value() % k != 0)
        return unknown();
    return known(d.dim_value() / k);
}

std::optional<Dims> shapeOf(onnx::InferenceContext& ctx, std::size_t input, int rank) {
    if (input >= ctx.getNumInputs()) return std::nullopt;
    const onnx::TypeProto* type = ctx.getInputType(input);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
    const auto& shape = type->tensor_type().shape();
    if (rank >= 0 && shape.dim_size() != rank) return std::nullopt;
    return Dims(shape.dim().begin(), shape.dim().end());
}

int elemTypeOf(onnx::InferenceContext& ctx, std::size_t input) {
    if (input >= ctx.getNumInputs()) return 0;
    const onnx::TypeProto* type = ctx.getInputType(input);
    if (!type || !type->has_tensor_type()) return 0;
    return type->tensor_type().elem_type();
}

bool hasOutput(onnx::InferenceContext& ctx, std::size_t output) {
    return output < ctx.getNumOutputs() && ctx.getOutputType(output) != nullptr;
}

void setOutput(onnx::InferenceContext& ctx, std::size_t output, int elemType,
               const std::optional<Dims>& dims) {
    if (!hasOutput(ctx, output)) return;
    onnx::TypeProto* type = ctx.getOutputType(output);
    auto* tensor = type->mutable_tensor_type();
    if (elemType != 0) tensor->set_elem_type(elemType);
    if (dims) {
        auto* shape = tensor->mutable_shape();
        shape->clear_dim();
        for (const auto& d : *dims) *shape->add_dim() = d;
    }
}

std::int64_t intAttribute(onnx::InferenceContext& ctx, const char* name, std::int64_t fallback) {
    const auto* a = ctx.getAttribute(name);
    return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

std::optional<std::vector<std::int64_t>> constantInts(onnx::InferenceContext& ctx,
                                                      std::size_t input) {
    if (input >= ctx.getNumInputs()) return std::nullopt;
    const onnx::TensorProto* t = ctx.getInputData(input);
    if (!t) return std::nullopt;
    std::vector<std::int64_t> values;
    if (t->data_type() == onnx::TensorProto::INT64) {
        if (t->has_raw_data()) {
            const std::string& raw = t->raw_data();
            if (raw.size() % 8 != 0 || raw.size() > 8 * 64) return std::nullopt;
            values.resize(raw.size() / 8);
            std::memcpy(values.data(), raw.data(), raw.size());
        } else {
            values.assign(t->int64_data().begin(), t->int64_data().end());
        }
    } else if (t->data_type() == onnx::TensorProto::INT32) {
        if (t->has_raw_data()) {
            const std::string& raw = t->raw_data();
            if (raw.size() % 4 != 0 || raw.size() > 4 * 64) return std::nullopt;
            for (std::size_t i = 0; i < raw.size(); i += 4) {
                std::int32_t v;
                std::memcpy(&v, raw.data() + i, 4);
                values.push_back(v);
            }
        } else {
            values.assign(t->int32_data().begin(), t->int32_data().end());
        }
    } else {
        return std::nullopt;
    }
    if (values.size() > 64) return std::nullopt;
    return values;
}

onnx::InferenceFunction inferAs(const char* op, int version) {
    return [op, version](onnx::InferenceContext& ctx) {
        const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version);
        if (s && s->GetTypeAndShapeInferenceFunction()) s->GetTypeAndShapeInferenceFunction()(ctx);
    };
}

void sameAsFirstInput(onnx::InferenceContext& ctx) {
    setOutput(ctx, 0, elemTypeOf(ctx, 0), shapeOf(ctx, 0));
}

}  // namespace ms

namespace {

using DomainRange = onnx::OpSchemaRegistry::DomainToVersionRange;

void addDomain(const char* domain) {
    auto& ranges = DomainRange::Instance();
    if (!ranges.Map().count(domain)) ranges.AddDomainToVersion(domain, 1, 1);
}

const std::set<std::string>& onnxCheckedDomains() {
    static const std::set<std::string> domains{"", "ai.onnx.ml", "ai.onnx.training",
                                               "ai.onnx.preview.training",
                                               kNewerOpsetPlaceholderDomain};
    return domains;
}

int importedVersion(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                    const std::string& domain, int fallback) {
    for (const auto& o : imports)
        if (canonicalDomain(o.domain()) == domain) return static_cast<int>(o.version());
    return fallback;
}

void moveExtensions(onnx::GraphProto& graph, int opset, int& moved) {
    for (auto& node : *graph.mutable_node()) {
        if (isOrtOnnxDomainExtension(node, opset)) {
            node.set_domain(kOrtOnnxDomainPlaceholder);
            ++moved;
        }
        for (auto& attribute : *node.mutable_attribute()) {
            if (attribute.has_g()) moveExtensions(*attribute.mutable_g(), opset, moved);
            for (auto& g : *attribute.mutable_graphs()) moveExtensions(g, opset, moved);
        }
    }
}

void importPlaceholder(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    for (const auto& o : imports)
        if (o.domain() == kOrtOnnxDomainPlaceholder) return;
    auto* added = imports.Add();
    added->set_domain(kOrtOnnxDomainPlaceholder);
    added->set_version(1);
}

// Element types a graph declares: inputs, outputs, value_info and initializers.
using DeclaredTypes = std::unordered_map<std::string, int>;

void collectDeclaredTypes(const onnx::GraphProto& graph, DeclaredTypes& types) {
    auto note = [&](const onnx::ValueInfoProto& v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0)
            types[v.name()] = v.type().tensor_type().elem_type();
    };
    for (const auto& v : graph.input()) note(v);
    for (const auto& v : graph.output()) note(v);
    for (const auto& v : graph.value_info()) note(v);
    for (const auto& init : graph.initializer()) types[init.name()] = init.data_type();
}

std::string typeList(const onnx::OpSchema::FormalParameter& formal) {
    std::vector<std::string> names;
    for (const auto* t : formal.GetTypes()) {
        std::string name = *t;
        if (name.rfind("tensor(", 0) == 0 && name.back() == ')')
            name = name.substr(7, name.size() - 8);
        names.push_back(name == "float16" ? "float16" : name);
    }
    std::sort(names.begin(), names.end());
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

struct CheckWalker {
    const onnx::ModelProto& model;
    MicrosoftCheckReport& report;

    bool isLocalFunction(const onnx::NodeProto& node) const {
        for (const auto& f : model.functions())
            if (f.name() == node.op_type() &&
                canonicalDomain(f.domain()) == canonicalDomain(node.domain()))
                return true;
        return false;
    }

    void checkTypes(const onnx::NodeProto& node, const onnx::OpSchema& schema,
                    const DeclaredTypes& types, const std::string& label) {
        const auto& formals = schema.inputs();
        for (int i = 0; i < node.input_size(); ++i) {
            if (node.input(i).empty() || formals.empty()) continue;
            const std::size_t k =
                std::min<std::size_t>(static_cast<std::size_t>(i), formals.size() - 1);
            if (static_cast<std::size_t>(i) >= formals.size() &&
                formals.back().GetOption() != onnx::OpSchema::Variadic)
                continue;
            const auto& formal = formals[k];
            auto it = types.find(node.input(i));
            if (it == types.end()) continue;
            onnx::TypeProto type;
            type.mutable_tensor_type()->set_elem_type(it->second);
            onnx::DataType dataType = nullptr;
            try {
                dataType = onnx::Utils::DataTypeUtils::ToType(type);
            } catch (const std::exception&) {
                dataType = nullptr;
            }
            // A type the linked onnx library does not know (int4, float8): nothing to judge by.
            if (!dataType || formal.GetTypes().count(dataType)) continue;
            report.problems.push_back(
                label + " (" + std::string(kMicrosoftDomain) + "::" + node.op_type() + "): input " +
                std::to_string(i) + " '" + node.input(i) + "' (" + formal.GetName() + ") is " +
                elementTypeName(it->second) + ", a type the operator does not take (" +
                typeList(formal) + ")");
        }
    }

    void walkGraph(const onnx::GraphProto& graph,
                   const std::unordered_map<std::string, int>& opsets, const std::string& where,
                   DeclaredTypes types) {
        collectDeclaredTypes(graph, types);
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            const std::string label =
                where + " node '" + (node.name().empty() ? "#" + std::to_string(i) : node.name()) +
                "'";
            walkNode(node, opsets, label, types);
            for (const auto& attribute : node.attribute()) {
                if (attribute.has_g())
                    walkGraph(attribute.g(), opsets, label + "/" + attribute.name(), types);
                for (const auto& g : attribute.graphs())
                    walkGraph(g, opsets, label + "/" + attribute.name(), types);
            }
        }
    }

    void walkNode(const onnx::NodeProto& node, const std::unordered_map<std::string, int>& opsets,
                  const std::string& label, const DeclaredTypes& types) {
        const std::string domain = canonicalDomain(node.domain());
        auto opset = opsets.find(domain);
        if (domain.empty()) {
            const int version = opset == opsets.end() ? 1 : opset->second;
            if (isOrtOnnxDomainExtension(node, version))
                report.ortExtensionNodes.push_back(label + " (" + node.op_type() +
                                                   ", ai.onnx opset " + std::to_string(version) +
                                                   ")");
            return;
        }
        if (onnxCheckedDomains().count(domain) || isLocalFunction(node)) return;
        // The checker itself fails a node whose domain the model does not import.
        if (opset == opsets.end()) return;
        const onnx::OpSchema* schema =
            onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
        if (!schema) {
            report.notChecked.push_back(label + " (" + domain + "::" + node.op_type() + ")");
            return;
        }
        if (domain != kMicrosoftDomain) return;
        ++report.checkedByOp[std::string(kMicrosoftDomain) + "::" + node.op_type()];
        ++report.checkedNodes;
        checkTypes(node, *schema, types, label);
    }
};

std::unordered_map<std::string, int> importMap(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    std::unordered_map<std::string, int> base = {}) {
    for (const auto& o : imports) base[canonicalDomain(o.domain())] = static_cast<int>(o.version());
    return base;
}

}  // namespace

void registerMicrosoftOpSchemas() {
    static std::once_flag once;
    std::call_once(once, [] {
        // The registry fills itself with onnx's schemas on first use; ours come after.
        (void)onnx::OpSchemaRegistry::Instance();
        addDomain(kMicrosoftDomain);
        addDomain(kOrtOnnxDomainPlaceholder);
        addDomain(kOnnxlensDomain);
        ms::registerMicrosoftLayerSchemas();
        ms::registerMicrosoftAttentionSchemas();
        ms::registerMicrosoftQuantizationSchemas();
        ms::registerOnnxlensOptimizerSchemas();
        std::sort(ms::registeredNames().begin(), ms::registeredNames().end());
    });
}

const std::vector<std::string>& microsoftOpsKnownToOnnxlens() {
    registerMicrosoftOpSchemas();
    return ms::registeredNames();
}

bool isOrtOnnxDomainExtension(const onnx::NodeProto& node, int defaultOpset) {
    if (!isDefaultDomain(node)) return false;
    if (node.op_type() == "SimplifiedLayerNormalization") return true;
    return node.op_type() == "LayerNormalization" && defaultOpset < 17;
}

int moveOrtOnnxDomainExtensions(onnx::ModelProto& copy) {
    int moved = 0;
    const int opset = importedVersion(copy.opset_import(), "", 1);
    moveExtensions(*copy.mutable_graph(), opset, moved);
    if (moved > 0) importPlaceholder(*copy.mutable_opset_import());
    for (auto& function : *copy.mutable_functions()) {
        int inFunction = 0;
        onnx::GraphProto body;
        body.mutable_node()->Swap(function.mutable_node());
        moveExtensions(body, importedVersion(function.opset_import(), "", opset), inFunction);
        body.mutable_node()->Swap(function.mutable_node());
        if (inFunction > 0) importPlaceholder(*function.mutable_opset_import());
        moved += inFunction;
    }
    return moved;
}

MicrosoftCheckReport checkMicrosoftNodes(const onnx::ModelProto& model) {
    registerMicrosoftOpSchemas();
    MicrosoftCheckReport report;
    CheckWalker walker{model, report};
    const auto opsets = importMap(model.opset_import());
    walker.walkGraph(model.graph(), opsets, "main graph", {});
    for (const auto& function : model.functions()) {
        onnx::GraphProto body;
        *body.mutable_node() = function.node();
        walker.walkGraph(body, importMap(function.opset_import(), opsets),
                         "function '" + function.name() + "'", {});
    }
    return report;
}

std::string describeOrtExtensionNodes(const MicrosoftCheckReport& report) {
    if (report.ortExtensionNodes.empty()) return {};
    std::map<std::string, std::vector<std::string>> byOp;
    for (const auto& label : report.ortExtensionNodes) {
        const auto open = label.rfind(" (");
        const std::string op = label.substr(open + 2, label.find(',', open) - open - 2);
        byOp[op].push_back(label);
    }
    std::string text;
    for (const auto& [op, labels] : byOp) {
        std::string names;
        for (std::size_t i = 0; i < labels.size() && i < 5; ++i)
            names += (names.empty() ? "" : "; ") + labels[i];
        if (labels.size() > 5) names += "; and " + std::to_string(labels.size() - 5) + " more";
        const std::string why = op == "LayerNormalization" ? "not an ONNX operator before opset 17"
                                                           : "not an ONNX operator at any opset";
        text += (text.empty() ? "" : "\n") + std::string("ai.onnx::") + op + " (" +
                std::to_string(labels.size()) + (labels.size() == 1 ? " node: " : " nodes: ") +
                names + "): " + why +
                "; ONNX Runtime accepts it as its own extension, and onnxlens runs it as ONNX "
                "Runtime does";
    }
    return text;
}

std::string describeMicrosoftCheck(const MicrosoftCheckReport& report) {
    std::string text;
    if (report.checkedNodes > 0) {
        std::string ops;
        for (const auto& [op, count] : report.checkedByOp)
            ops += (ops.empty() ? "" : ", ") + op.substr(op.find("::") + 2) + " " +
                   std::to_string(count);
        text = std::to_string(report.checkedNodes) +
               (report.checkedNodes == 1 ? " com.microsoft node" : " com.microsoft nodes") +
               " checked against onnxlens's schemas (" + ops + ")";
    }
    if (!report.notChecked.empty()) {
        if (!text.empty()) text += "; ";
        std::string names;
        for (std::size_t i = 0; i < report.notChecked.size() && i < 5; ++i)
            names += (names.empty() ? "" : "; ") + report.notChecked[i];
        if (report.notChecked.size() > 5)
            names += "; and " + std::to_string(report.notChecked.size() - 5) + " more";
        text += std::to_string(report.notChecked.size()) +
                (report.notChecked.size() == 1 ? " node" : " nodes") +
                " not checked (no schema in onnx or onnxlens): " + names;
    }
    return text;
}

}  // namespace onnxlens
