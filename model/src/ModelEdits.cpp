#include "onnxlens/model/ModelEdits.h"

#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <utility>

#include "ModelEditSupport.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/StructuralCopy.h"
#include "onnxlens/model/TensorFile.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

using detail::quoteName;

// ---------------------------------------------------------------------------------------------
// Names, descriptions, factories

namespace {

const std::vector<std::pair<ModelEditKind, const char*>>& kindNames() {
    static const std::vector<std::pair<ModelEditKind, const char*>> names = {
        {ModelEditKind::SetDim, "set-dim"},
        {ModelEditKind::MakeBatchDynamic, "make-batch-dynamic"},
        {ModelEditKind::Rename, "rename"},
        {ModelEditKind::AddOutput, "add-output"},
        {ModelEditKind::RemoveOutput, "remove-output"},
        {ModelEditKind::Prune, "prune"},
        {ModelEditKind::Extract, "extract"},
        {ModelEditKind::DeleteNode, "delete-node"},
        {ModelEditKind::SetAttribute, "set-attr"},
        {ModelEditKind::SetInitializer, "set-initializer"},
        {ModelEditKind::SetMetadata, "metadata"},
        {ModelEditKind::ConvertOpset, "opset"},
    };
    return names;
}

std::string joinQuoted(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + quoteName(n);
    return text;
}

}  // namespace

std::string modelEditKindName(ModelEditKind kind) {
    for (const auto& [k, name] : kindNames())
        if (k == kind) return name;
    return "edit";
}

bool parseModelEditKind(const std::string& name, ModelEditKind& kind) {
    for (const auto& [k, n] : kindNames())
        if (name == n) {
            kind = k;
            return true;
        }
    return false;
}

std::string ModelEdit::kindName() const { return modelEditKindName(kind); }

std::string ModelEdit::describe() const {
    switch (kind) {
        case ModelEditKind::SetDim:
            return "set dim " + std::to_string(axis) + " of " + quoteName(name) + " to " + value;
        case ModelEditKind::MakeBatchDynamic:
            return "make the batch dynamic (" + value + ")";
        case ModelEditKind::Rename: {
            const char* what = renameTarget == RenameTarget::Node     ? "node "
                               : renameTarget == RenameTarget::Tensor ? "tensor "
                                                                      : "";
            return std::string("rename ") + what + quoteName(name) + " to " + quoteName(value);
        }
        case ModelEditKind::AddOutput:
            return "add " + quoteName(name) + " as an output";
        case ModelEditKind::RemoveOutput:
            return "remove the output " + quoteName(name);
        case ModelEditKind::Prune:
            return "prune dead nodes and unused initializers";
        case ModelEditKind::Extract:
            return "extract the subgraph from " + (inputs.empty() ? "(none)" : joinQuoted(inputs)) +
                   " to " + joinQuoted(outputs);
        case ModelEditKind::DeleteNode:
            return "delete the node " + quoteName(name);
        case ModelEditKind::SetAttribute:
            return "set " + quoteName(name) + "." + attribute + " to " + value;
        case ModelEditKind::SetInitializer:
            return "replace the initializer " + quoteName(name) +
                   (tensor ? std::string(" with a tensor") : " from " + file.filename().string());
        case ModelEditKind::SetMetadata:
            return value.empty()
                       ? "remove the metadata " + quoteName(name)
                       : "set the metadata " + quoteName(name) + " to " + quoteName(value);
        case ModelEditKind::ConvertOpset:
            return "convert to opset " + std::to_string(opset);
    }
    return "edit";
}

bool ModelEdit::operator==(const ModelEdit& other) const {
    const bool sameTensor = tensor == other.tensor ||
                            (tensor && other.tensor &&
                             tensor->SerializeAsString() == other.tensor->SerializeAsString());
    return kind == other.kind && name == other.name && value == other.value && axis == other.axis &&
           attribute == other.attribute && renameTarget == other.renameTarget &&
           inputs == other.inputs && outputs == other.outputs && file == other.file && sameTensor &&
           opset == other.opset;
}

ModelEdit setDimEdit(const std::string& tensor, std::int64_t axis, const std::string& value) {
    ModelEdit e;
    e.kind = ModelEditKind::SetDim;
    e.name = tensor;
    e.axis = axis;
    e.value = value;
    return e;
}
ModelEdit makeBatchDynamicEdit(const std::string& symbol) {
    ModelEdit e;
    e.kind = ModelEditKind::MakeBatchDynamic;
    e.value = symbol;
    return e;
}
ModelEdit renameEdit(const std::string& from, const std::string& to, RenameTarget target) {
    ModelEdit e;
    e.kind = ModelEditKind::Rename;
    e.name = from;
    e.value = to;
    e.renameTarget = target;
    return e;
}
ModelEdit addOutputEdit(const std::string& tensor) {
    ModelEdit e;
    e.kind = ModelEditKind::AddOutput;
    e.name = tensor;
    return e;
}
ModelEdit removeOutputEdit(const std::string& output) {
    ModelEdit e;
    e.kind = ModelEditKind::RemoveOutput;
    e.name = output;
    return e;
}
ModelEdit pruneEdit() {
    ModelEdit e;
    e.kind = ModelEditKind::Prune;
    return e;
}
ModelEdit extractEdit(std::vector<std::string> inputs, std::vector<std::string> outputs) {
    ModelEdit e;
    e.kind = ModelEditKind::Extract;
    e.inputs = std::move(inputs);
    e.outputs = std::move(outputs);
    return e;
}
ModelEdit deleteNodeEdit(const std::string& node) {
    ModelEdit e;
    e.kind = ModelEditKind::DeleteNode;
    e.name = node;
    return e;
}
ModelEdit setAttributeEdit(const std::string& node, const std::string& attribute,
                           const std::string& value) {
    ModelEdit e;
    e.kind = ModelEditKind::SetAttribute;
    e.name = node;
    e.attribute = attribute;
    e.value = value;
    return e;
}
ModelEdit setInitializerEdit(const std::string& initializer, const std::filesystem::path& file) {
    ModelEdit e;
    e.kind = ModelEditKind::SetInitializer;
    e.name = initializer;
    e.file = file;
    return e;
}
ModelEdit setInitializerEdit(const std::string& initializer,
                             std::shared_ptr<const onnx::TensorProto> tensor) {
    ModelEdit e;
    e.kind = ModelEditKind::SetInitializer;
    e.name = initializer;
    e.tensor = std::move(tensor);
    return e;
}
ModelEdit setMetadataEdit(const std::string& key, const std::string& value) {
    ModelEdit e;
    e.kind = ModelEditKind::SetMetadata;
    e.name = key;
    e.value = value;
    return e;
}
ModelEdit convertOpsetEdit(int opset) {
    ModelEdit e;
    e.kind = ModelEditKind::ConvertOpset;
    e.opset = opset;
    return e;
}

std::string BakedBatchConstant::describe() const {
    std::string text = opType + " " + quoteName(node) + " " + quoteName(constant) + " [";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

// ---------------------------------------------------------------------------------------------
// Shared helpers (ModelEditSupport.h)

namespace detail {

void collectValueNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
    for (const auto& v : graph.input()) names.insert(v.name());
    for (const auto& v : graph.output()) names.insert(v.name());
    for (const auto& v : graph.value_info()) names.insert(v.name());
    for (const auto& t : graph.initializer()) names.insert(t.name());
    for (const auto& s : graph.sparse_initializer()) names.insert(s.values().name());
    for (const auto& node : graph.node()) {
        for (const auto& n : node.input())
            if (!n.empty()) names.insert(n);
        for (const auto& n : node.output())
            if (!n.empty()) names.insert(n);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectValueNames(a.g(), names);
            for (const auto& g : a.graphs()) collectValueNames(g, names);
        }
    }
}

void collectNodeNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
    for (const auto& node : graph.node()) {
        if (!node.name().empty()) names.insert(node.name());
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectNodeNames(a.g(), names);
            for (const auto& g : a.graphs()) collectNodeNames(g, names);
        }
    }
}

std::set<std::string> definedValues(const onnx::GraphProto& graph) {
    std::set<std::string> names;
    for (const auto& v : graph.input()) names.insert(v.name());
    for (const auto& t : graph.initializer()) names.insert(t.name());
    for (const auto& s : graph.sparse_initializer()) names.insert(s.values().name());
    for (const auto& node : graph.node())
        for (const auto& n : node.output())
            if (!n.empty()) names.insert(n);
    return names;
}

namespace {
void outerReadsOfGraph(const onnx::GraphProto& graph, std::set<std::string>& reads) {
    const auto defined = definedValues(graph);
    std::set<std::string> inner;
    for (const auto& node : graph.node()) {
        for (const auto& n : node.input())
            if (!n.empty()) inner.insert(n);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) outerReadsOfGraph(a.g(), inner);
            for (const auto& g : a.graphs()) outerReadsOfGraph(g, inner);
        }
    }
    for (const auto& o : graph.output()) inner.insert(o.name());
    for (const auto& n : inner)
        if (!defined.count(n)) reads.insert(n);
}
}  // namespace

std::set<std::string> outerScopeReads(const onnx::NodeProto& node) {
    std::set<std::string> reads;
    for (const auto& a : node.attribute()) {
        if (a.has_g()) outerReadsOfGraph(a.g(), reads);
        for (const auto& g : a.graphs()) outerReadsOfGraph(g, reads);
    }
    return reads;
}

int findNode(const onnx::GraphProto& graph, const std::string& name) {
    for (int i = 0; i < graph.node_size(); ++i)
        if (graph.node(i).name() == name) return i;
    for (int i = 0; i < graph.node_size(); ++i)
        if (graph.node(i).name().empty() && profileNameOf(graph.node(i)) == name) return i;
    return -1;
}

std::optional<onnx::TypeProto> valueType(const onnx::GraphProto& graph, const std::string& name,
                                         const InferredShapes* shapes) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()})
        for (const auto& v : *list)
            if (v.name() == name && v.has_type() && v.type().value_case() != 0) return v.type();
    if (shapes)
        if (const auto* t = shapes->typeOf(name)) return *t;
    for (const auto& t : graph.initializer())
        if (t.name() == name) {
            onnx::TypeProto type;
            type.mutable_tensor_type()->set_elem_type(t.data_type());
            auto* shape = type.mutable_tensor_type()->mutable_shape();
            for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
            return type;
        }
    return std::nullopt;
}

std::optional<std::vector<std::int64_t>> intConstant(const onnx::TensorProto& tensor) {
    if (tensor.dims_size() > 1 || usesExternalData(tensor)) return std::nullopt;
    if (tensor.data_type() != onnx::TensorProto::INT64 &&
        tensor.data_type() != onnx::TensorProto::INT32)
        return std::nullopt;
    auto bytes = tensorRawBytes(tensor, tensor.name());
    if (!bytes) return std::nullopt;
    std::vector<std::int64_t> values;
    const std::string& raw = *bytes;
    if (tensor.data_type() == onnx::TensorProto::INT64) {
        values.resize(raw.size() / 8);
        for (std::size_t i = 0; i < values.size(); ++i)
            std::memcpy(&values[i], raw.data() + i * 8, 8);
    } else {
        for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
            std::int32_t v = 0;
            std::memcpy(&v, raw.data() + i, 4);
            values.push_back(v);
        }
    }
    return values;
}

onnx::TensorProto int64Tensor(const std::string& name, const std::vector<std::int64_t>& values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t.add_int64_data(v);
    return t;
}

std::string freshName(const std::string& base, std::set<std::string>& used) {
    std::string name = base;
    for (int i = 1; used.count(name); ++i) name = base + "_" + std::to_string(i);
    used.insert(name);
    return name;
}

std::set<std::string> downstreamValues(const onnx::GraphProto& graph,
                                       const std::set<std::string>& seeds) {
    std::set<std::string> values = seeds;
    for (const auto& node : graph.node()) {
        bool reads = false;
        for (const auto& in : node.input()) reads = reads || (!in.empty() && values.count(in));
        if (!reads)
            for (const auto& n : outerScopeReads(node)) reads = reads || values.count(n) > 0;
        if (reads)
            for (const auto& out : node.output())
                if (!out.empty()) values.insert(out);
    }
    return values;
}

int dropValueInfo(onnx::GraphProto& graph, const std::set<std::string>& values) {
    auto* infos = graph.mutable_value_info();
    const int before = infos->size();
    infos->erase(
        std::remove_if(infos->begin(), infos->end(),
                       [&](const onnx::ValueInfoProto& v) { return values.count(v.name()) > 0; }),
        infos->end());
    return before - infos->size();
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The working copy: the model with its large inline initializers stubbed (name, type, dims, one
// element of zeros, a marker in doc_string), so that an edit can fail anywhere without touching
// the model, and the edited copy takes the weights back when it succeeds.

namespace {

const std::string kStubMarker = "\x01onnxlens-edit-stub:";
constexpr std::size_t kStubMinBytes = 4096;

bool stubbable(const onnx::TensorProto& t) {
    return !usesExternalData(t) && t.data_type() != onnx::TensorProto::STRING &&
           t.ByteSizeLong() > kStubMinBytes;
}

void copyModelFields(const onnx::ModelProto& model, onnx::ModelProto& copy) {
    copyModelFieldsButGraph(model, copy);
    const auto& g = model.graph();
    auto* cg = copy.mutable_graph();
    *cg->mutable_node() = g.node();
    cg->set_name(g.name());
    *cg->mutable_sparse_initializer() = g.sparse_initializer();
    cg->set_doc_string(g.doc_string());
    *cg->mutable_input() = g.input();
    *cg->mutable_output() = g.output();
    *cg->mutable_value_info() = g.value_info();
    *cg->mutable_quantization_annotation() = g.quantization_annotation();
}

// The copy, with the stubs; the originals' indices are in the markers.
onnx::ModelProto stubbedCopy(const onnx::ModelProto& model) {
    onnx::ModelProto copy;
    copyModelFields(model, copy);
    const auto& initializers = model.graph().initializer();
    for (int i = 0; i < initializers.size(); ++i) {
        const auto& t = initializers[i];
        auto* c = copy.mutable_graph()->add_initializer();
        if (!stubbable(t)) {
            c->CopyFrom(t);
            continue;
        }
        c->set_name(t.name());
        c->set_data_type(t.data_type());
        *c->mutable_dims() = t.dims();
        c->set_doc_string(kStubMarker + std::to_string(i));
        c->set_raw_data(
            std::string(std::max<std::size_t>(1, elementTypeSize(t.data_type())), '\0'));
        if (elementCount(t).value_or(0) == 0) c->clear_raw_data();
    }
    return copy;
}

// Moves the weights of `model` into the stubs of `copy` (by marker, or by name for a copy that
// lost the markers: the version converter keeps names but not doc strings), then makes `copy`
// the model.
void commitCopy(onnx::ModelProto& model, onnx::ModelProto& copy, bool byNameFallback) {
    auto* originals = model.mutable_graph()->mutable_initializer();
    std::map<std::string, int> byName;
    for (int i = 0; i < originals->size(); ++i)
        if (stubbable((*originals)[i])) byName.emplace((*originals)[i].name(), i);
    std::vector<bool> taken(static_cast<std::size_t>(originals->size()), false);
    for (auto& t : *copy.mutable_graph()->mutable_initializer()) {
        int index = -1;
        if (t.doc_string().rfind(kStubMarker, 0) == 0) {
            index = std::atoi(t.doc_string().c_str() + kStubMarker.size());
        } else if (auto it = byName.find(t.name());
                   byNameFallback && it != byName.end() && t.raw_data().size() <= 16) {
            // A stub that lost its marker: same name, type and dims.
            const auto& o = (*originals)[it->second];
            if (o.data_type() == t.data_type() &&
                std::equal(o.dims().begin(), o.dims().end(), t.dims().begin(), t.dims().end()))
                index = it->second;
        }
        if (index < 0 || index >= originals->size() || taken[static_cast<std::size_t>(index)])
            continue;
        taken[static_cast<std::size_t>(index)] = true;
        std::string name = t.name();
        t.Swap(&(*originals)[index]);
        t.set_name(name);
    }
    model.Swap(&copy);
}

// ---------------------------------------------------------------------------------------------
// The edits that do not restructure the graph

onnx::TensorShapeProto_Dimension* dimOf(onnx::ValueInfoProto& value, std::int64_t axis) {
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    return shape->mutable_dim(static_cast<int>(axis));
}

bool isNumber(const std::string& text) {
    if (text.empty()) return false;
    std::size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (start == text.size()) return false;
    return std::all_of(text.begin() + static_cast<long>(start), text.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

Status setDim(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report) {
    auto* graph = model.mutable_graph();
    std::vector<onnx::ValueInfoProto*> targets;
    for (auto& v : *graph->mutable_input())
        if (v.name() == edit.name) targets.push_back(&v);
    for (auto& v : *graph->mutable_output())
        if (v.name() == edit.name) targets.push_back(&v);
    if (targets.empty())
        return makeError("", quoteName(edit.name) + " is not an input or output of the model");
    const auto& type = targets.front()->type();
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
        return makeError("", quoteName(edit.name) + " has no tensor shape to edit");
    const std::int64_t rank = type.tensor_type().shape().dim_size();
    std::int64_t axis = edit.axis;
    if (axis < -rank || axis >= rank)
        return makeError("", "axis " + std::to_string(edit.axis) + " is out of range for " +
                                 quoteName(edit.name) + " of rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    std::int64_t number = 0;
    const bool numeric = isNumber(edit.value);
    if (numeric) {
        errno = 0;
        number = std::strtoll(edit.value.c_str(), nullptr, 10);
        if (errno == ERANGE || number <= 0)
            return makeError("",
                             "the dim must be a positive number or a symbol, not " + edit.value);
    } else if (edit.value.empty() || edit.value.find_first_of(" \t\n[]") != std::string::npos) {
        return makeError("",
                         "the dim must be a positive number or a symbol, not '" + edit.value + "'");
    }
    for (auto* target : targets) {
        auto* dim = dimOf(*target, axis);
        if (numeric)
            dim->set_dim_value(number);
        else
            dim->set_dim_param(edit.value);
    }
    // Values computed from an input carry the old dim in value_info: inferred again.
    bool isInput = false;
    for (const auto& v : graph->input()) isInput = isInput || v.name() == edit.name;
    if (isInput) {
        const int dropped =
            detail::dropValueInfo(*graph, detail::downstreamValues(*graph, {edit.name}));
        if (dropped > 0)
            report.changes.push_back(std::to_string(dropped) +
                                     " value_info entries downstream dropped (inferred again)");
    }
    report.changes.push_back("dim " + std::to_string(axis) + " of " + quoteName(edit.name) +
                             " is " + edit.value);
    return Ok{};
}

Status addOutput(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report) {
    auto* graph = model.mutable_graph();
    for (const auto& o : graph->output())
        if (o.name() == edit.name)
            return makeError("", quoteName(edit.name) + " is already an output");
    const auto defined = detail::definedValues(*graph);
    if (edit.name.empty() || !defined.count(edit.name))
        return makeError("", "no tensor " + quoteName(edit.name) + " in the main graph");
    auto shapes = inferShapes(model);
    auto type = detail::valueType(*graph, edit.name, shapes.get());
    if (!type)
        return makeError("", "the type of " + quoteName(edit.name) +
                                 " is unknown (shape inference could not tell it)");
    auto* output = graph->add_output();
    output->set_name(edit.name);
    *output->mutable_type() = *type;
    report.changes.push_back("output " + quoteName(edit.name) + " added (" + typeName(*type) + ")");
    return Ok{};
}

Status removeOutput(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report) {
    auto* outputs = model.mutable_graph()->mutable_output();
    for (int i = 0; i < outputs->size(); ++i) {
        if ((*outputs)[i].name() != edit.name) continue;
        if (outputs->size() == 1)
            return makeError("", quoteName(edit.name) + " is the model's only output");
        outputs->erase(outputs->begin() + i);
        report.changes.push_back("output " + quoteName(edit.name) + " removed");
        return Ok{};
    }
    return makeError("", quoteName(edit.name) + " is not an output of the model");
}

// ---- set-attr

Result<std::vector<std::string>> splitList(const std::string& text) {
    std::string body = text;
    auto trim = [](std::string s) {
        const auto b = s.find_first_not_of(" \t");
        const auto e = s.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    body = trim(body);
    if (!body.empty() && body.front() == '[') {
        if (body.back() != ']') return makeError("", "a list must end with ']': " + text);
        body = body.substr(1, body.size() - 2);
    }
    std::vector<std::string> items;
    if (trim(body).empty()) return items;
    std::size_t start = 0;
    while (true) {
        const auto comma = body.find(',', start);
        items.push_back(trim(body.substr(start, comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return items;
}

Result<std::int64_t> parseInt(const std::string& text) {
    if (!isNumber(text)) return makeError("", "'" + text + "' is not an integer");
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return makeError("", "'" + text + "' is out of the int64 range");
    return static_cast<std::int64_t>(v);
}

Result<float> parseFloat(const std::string& text) {
    if (text.empty()) return makeError("", "'' is not a number");
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return makeError("", "'" + text + "' is not a number");
    if (std::isfinite(v) && std::fabs(v) > 3.4028234663852886e38)
        return makeError("", "'" + text + "' is out of the float range");
    return static_cast<float>(v);
}

using AttrType = onnx::AttributeProto::AttributeType;

Status parseAttributeValue(const std::string& text, AttrType type, onnx::AttributeProto& attr,
                           const std::filesystem::path& baseDirectory) {
    attr.set_type(type);
    switch (type) {
        case onnx::AttributeProto::INT: {
            auto v = parseInt(text);
            if (!v) return v.error();
            attr.set_i(*v);
            return Ok{};
        }
        case onnx::AttributeProto::FLOAT: {
            auto v = parseFloat(text);
            if (!v) return v.error();
            attr.set_f(*v);
            return Ok{};
        }
        case onnx::AttributeProto::STRING:
            attr.set_s(text);
            return Ok{};
        case onnx::AttributeProto::INTS:
        case onnx::AttributeProto::FLOATS:
        case onnx::AttributeProto::STRINGS: {
            auto items = splitList(text);
            if (!items) return items.error();
            for (const auto& item : *items) {
                if (type == onnx::AttributeProto::STRINGS) {
                    attr.add_strings(item);
                } else if (type == onnx::AttributeProto::INTS) {
                    auto v = parseInt(item);
                    if (!v) return v.error();
                    attr.add_ints(*v);
                } else {
                    auto v = parseFloat(item);
                    if (!v) return v.error();
                    attr.add_floats(*v);
                }
            }
            return Ok{};
        }
        case onnx::AttributeProto::TENSOR: {
            std::filesystem::path file = text;
            if (file.is_relative() && !baseDirectory.empty()) file = baseDirectory / file;
            auto tensor = readTensorFile(file);
            if (!tensor) return tensor.error();
            *attr.mutable_t() = *tensor;
            return Ok{};
        }
        default:
            return makeError("", "attributes of type " +
                                     onnx::AttributeProto::AttributeType_Name(type) +
                                     " cannot be set from text");
    }
}

// Limits the schema states only in its prose, checked for the common attributes.
Status checkAttributeRange(const onnx::AttributeProto& attr, const onnx::NodeProto& node,
                           const InferredShapes* shapes) {
    static const std::set<std::string> positive = {"group",        "strides",   "dilations",
                                                   "kernel_shape", "blocksize", "size"};
    static const std::set<std::string> nonNegative = {"pads", "output_padding"};
    auto check = [&](std::int64_t v) -> Status {
        if (positive.count(attr.name()) && v <= 0)
            return makeError("", attr.name() + " must be positive, not " + std::to_string(v));
        if (nonNegative.count(attr.name()) && v < 0)
            return makeError("", attr.name() + " must not be negative, not " + std::to_string(v));
        return Ok{};
    };
    if (attr.type() == onnx::AttributeProto::INT) {
        auto s = check(attr.i());
        if (!s) return s;
    }
    for (auto v : attr.ints()) {
        auto s = check(v);
        if (!s) return s;
    }
    // Conv's group against the channels (onnx's inference does not check it).
    if (attr.name() == "group" && attr.type() == onnx::AttributeProto::INT && attr.i() > 0 &&
        (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") && shapes &&
        node.input_size() > 1) {
        const auto x = shapes->dimsOf(node.input(0));
        const auto w = shapes->dimsOf(node.input(1));
        if (x && x->size() > 1 && (*x)[1].value > 0 && (*x)[1].value % attr.i() != 0)
            return makeError("", "group " + std::to_string(attr.i()) + " does not divide the " +
                                     std::to_string((*x)[1].value) + " input channels");
        if (node.op_type() == "Conv" && x && w && x->size() > 1 && w->size() > 1 &&
            (*x)[1].value > 0 && (*w)[1].value > 0 && (*w)[1].value * attr.i() != (*x)[1].value)
            return makeError("", "group " + std::to_string(attr.i()) + " times the weight's " +
                                     std::to_string((*w)[1].value) + " channels is not the " +
                                     std::to_string((*x)[1].value) + " input channels");
    }
    if ((attr.name() == "axis" || attr.name() == "axes") && node.input_size() > 0 && shapes) {
        if (const auto* type = shapes->typeOf(node.input(0));
            type && type->has_tensor_type() && type->tensor_type().has_shape()) {
            std::int64_t rank = type->tensor_type().shape().dim_size();
            // Unsqueeze's axes index the output; Concat and Flatten allow rank.
            if (node.op_type() == "Unsqueeze") rank += attr.ints_size();
            if (node.op_type() == "Flatten") rank += 1;
            std::vector<std::int64_t> axes(attr.ints().begin(), attr.ints().end());
            if (attr.type() == onnx::AttributeProto::INT) axes.push_back(attr.i());
            for (auto a : axes)
                if (a < -rank || a >= rank)
                    return makeError(
                        "", attr.name() + " " + std::to_string(a) +
                                " is out of range for an input of rank " +
                                std::to_string(node.op_type() == "Flatten" ? rank - 1 : rank));
        }
    }
    return Ok{};
}

Status setAttribute(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report,
                    const ModelEditOptions& options) {
    auto* graph = model.mutable_graph();
    const int index = detail::findNode(*graph, edit.name);
    if (index < 0) return makeError("", "no node " + quoteName(edit.name) + " in the main graph");
    auto& node = *graph->mutable_node(index);
    if (edit.attribute.empty()) return makeError("", "no attribute name given");
    registerMicrosoftOpSchemas();
    const int version = opsetVersion(model, canonicalDomain(node.domain()), 0);
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), version, canonicalDomain(node.domain()));
    const onnx::AttributeProto* existing = findAttribute(node, edit.attribute);
    AttrType type = onnx::AttributeProto::UNDEFINED;
    if (schema) {
        const auto& attributes = schema->attributes();
        auto it = attributes.find(edit.attribute);
        if (it == attributes.end()) {
            std::string known;
            for (const auto& [name, _] : attributes) known += (known.empty() ? "" : ", ") + name;
            return makeError(
                "", node.op_type() + " (opset " + std::to_string(version) + ") has no attribute '" +
                        edit.attribute + "'" +
                        (known.empty() ? std::string(" (it has none)") : "; it has " + known));
        }
        type = static_cast<AttrType>(it->second.type);
    } else if (existing) {
        type = existing->type();
    } else {
        return makeError("", "no schema for " + displayDomain(node.domain()) + " " +
                                 node.op_type() + " and the node has no attribute '" +
                                 edit.attribute + "' to take the type from");
    }
    onnx::AttributeProto attr;
    attr.set_name(edit.attribute);
    auto parsed = parseAttributeValue(edit.value, type, attr, options.baseDirectory);
    if (!parsed)
        return makeError("", "attribute '" + edit.attribute + "' of " + node.op_type() +
                                 " is of type " + onnx::AttributeProto::AttributeType_Name(type) +
                                 ": " + parsed.error().message);
    auto before = inferShapes(model);
    auto range = checkAttributeRange(attr, node, before.get());
    if (!range) return range;
    bool replaced = false;
    for (auto& a : *node.mutable_attribute())
        if (a.name() == edit.attribute) {
            a = attr;
            replaced = true;
        }
    if (!replaced) *node.add_attribute() = attr;
    if (schema) {
        try {
            schema->Verify(node);
        } catch (const std::exception& e) {
            return makeError("", std::string("the schema refuses it: ") + e.what());
        }
    }
    // What the schema's shape inference says of the new value (Conv's group against the
    // channels, a Transpose's perm against the rank).
    if (before->ok() && !before->skipped()) {
        auto after = inferShapes(model);
        if (!after->ok())
            return makeError("", "shape inference refuses the new value: " + after->message());
    }
    if (options.checkNode)
        if (auto checked = options.checkNode(model, node); !checked) return checked;
    report.changes.push_back(profileNameOf(node) + "." + edit.attribute + " = " + edit.value);
    return Ok{};
}

// ---- set-initializer, metadata, opset

Status setInitializer(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report,
                      const ModelEditOptions& options) {
    onnx::TensorProto* target = nullptr;
    for (auto& t : *model.mutable_graph()->mutable_initializer())
        if (t.name() == edit.name) target = &t;
    if (!target)
        return makeError("", "no initializer " + quoteName(edit.name) + " in the main graph");
    onnx::TensorProto replacement;
    if (edit.tensor) {
        replacement = *edit.tensor;
    } else {
        std::filesystem::path file = edit.file;
        if (file.is_relative() && !options.baseDirectory.empty())
            file = options.baseDirectory / file;
        auto read = readTensorFile(file);
        if (!read) return read.error();
        replacement = std::move(*read);
    }
    if (usesExternalData(replacement))
        return makeError("", "the replacement tensor refers to external data");
    if (replacement.data_type() != target->data_type())
        return makeError("", "the replacement is " + elementTypeName(replacement.data_type()) +
                                 ", the initializer " + elementTypeName(target->data_type()));
    if (!std::equal(replacement.dims().begin(), replacement.dims().end(), target->dims().begin(),
                    target->dims().end()))
        return makeError("", "the replacement's shape " + dimsText(replacement) +
                                 " differs from the initializer's " + dimsText(*target));
    auto size = checkTensorDataSize(replacement, "the replacement");
    if (!size) return size;
    replacement.set_name(target->name());
    replacement.clear_doc_string();
    replacement.set_doc_string(
        target->doc_string().rfind(kStubMarker, 0) == 0 ? std::string() : target->doc_string());
    *target = std::move(replacement);
    report.changes.push_back("initializer " + quoteName(edit.name) + " replaced (" +
                             elementTypeName(target->data_type()) + " " + dimsText(*target) + ")");
    return Ok{};
}

Status setMetadata(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report) {
    const std::string& key = edit.name;
    if (key.empty()) return makeError("", "no metadata key given");
    if (key == "doc_string") {
        model.set_doc_string(edit.value);
    } else if (key == "graph_doc_string") {
        model.mutable_graph()->set_doc_string(edit.value);
    } else if (key == "producer_name") {
        model.set_producer_name(edit.value);
    } else if (key == "producer_version") {
        model.set_producer_version(edit.value);
    } else if (key == "domain") {
        model.set_domain(edit.value);
    } else {
        auto* props = model.mutable_metadata_props();
        for (int i = 0; i < props->size(); ++i)
            if ((*props)[i].key() == key) {
                if (edit.value.empty())
                    props->erase(props->begin() + i);
                else
                    (*props)[i].set_value(edit.value);
                report.changes.push_back("metadata " + quoteName(key) +
                                         (edit.value.empty() ? " removed" : " changed"));
                return Ok{};
            }
        if (edit.value.empty()) return makeError("", "no metadata entry " + quoteName(key));
        auto* entry = props->Add();
        entry->set_key(key);
        entry->set_value(edit.value);
        report.changes.push_back("metadata " + quoteName(key) + " added");
        return Ok{};
    }
    report.changes.push_back(key + " set");
    return Ok{};
}

Status convertOpset(onnx::ModelProto& model, const ModelEdit& edit, ModelEditReport& report) {
    const int current = defaultOpset(model);
    const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
    if (edit.opset < 1 || edit.opset > newest)
        return makeError("", "opset " + std::to_string(edit.opset) +
                                 " is outside what onnx's converter knows (1 to " +
                                 std::to_string(newest) + ")");
    if (edit.opset == current) {
        report.changes.push_back("already at opset " + std::to_string(current));
        return Ok{};
    }
    onnx::ModelProto converted;
    try {
        converted = onnx::version_conversion::ConvertVersion(model, edit.opset);
    } catch (const std::exception& e) {
        return makeError("", std::string("onnx's version converter: ") + e.what());
    }
    if (!converted.has_graph()) return makeError("", "onnx's version converter returned no graph");
    // onnx's converter goes through its IR, which has no external data: an initializer whose
    // bytes live in a .data file comes back with its name, type and dims and no data at all. Such
    // a tensor gets its location back; one that the converter changed (other type or dims) cannot
    // be restored, and the conversion is refused rather than written without weights.
    std::map<std::string, const onnx::TensorProto*> external;
    for (const auto& t : model.graph().initializer())
        if (usesExternalData(t)) external.emplace(t.name(), &t);
    for (auto& t : *converted.mutable_graph()->mutable_initializer()) {
        auto it = external.find(t.name());
        if (it == external.end() || usesExternalData(t)) continue;
        const onnx::TensorProto& original = *it->second;
        const bool same = original.data_type() == t.data_type() &&
                          std::equal(original.dims().begin(), original.dims().end(),
                                     t.dims().begin(), t.dims().end());
        if (!same || !t.raw_data().empty())
            return makeError("", "onnx's version converter changed initializer '" + t.name() +
                                     "', whose data is external; onnxlens cannot carry its "
                                     "data over");
        t.CopyFrom(original);
    }
    model.Swap(&converted);
    report.changes.push_back("opset " + std::to_string(current) + " -> " +
                             std::to_string(edit.opset));
    return Ok{};
}

Status dispatch(onnx::ModelProto& copy, const ModelEdit& edit, const ModelEditOptions& options,
                ModelEditReport& report) {
    switch (edit.kind) {
        case ModelEditKind::SetDim:
            return setDim(copy, edit, report);
        case ModelEditKind::MakeBatchDynamic:
            return detail::makeBatchDynamic(copy, edit.value, report);
        case ModelEditKind::Rename: {
            if (edit.value.empty()) return makeError("", "the new name is empty");
            if (edit.name.empty()) return makeError("", "the old name is empty");
            RenameTarget target = edit.renameTarget;
            if (target == RenameTarget::Auto) {
                std::set<std::string> values;
                detail::collectValueNames(copy.graph(), values);
                target = values.count(edit.name) ? RenameTarget::Tensor : RenameTarget::Node;
            }
            return target == RenameTarget::Tensor
                       ? detail::renameValue(copy, edit.name, edit.value, report)
                       : detail::renameNode(copy, edit.name, edit.value, report);
        }
        case ModelEditKind::AddOutput:
            return addOutput(copy, edit, report);
        case ModelEditKind::RemoveOutput:
            return removeOutput(copy, edit, report);
        case ModelEditKind::Prune:
            return detail::pruneGraph(copy, report);
        case ModelEditKind::Extract:
            return detail::extractSubgraph(copy, edit.inputs, edit.outputs, report);
        case ModelEditKind::DeleteNode:
            return detail::deleteNode(copy, edit.name, report);
        case ModelEditKind::SetAttribute:
            return setAttribute(copy, edit, report, options);
        case ModelEditKind::SetInitializer:
            return setInitializer(copy, edit, report, options);
        case ModelEditKind::SetMetadata:
            return setMetadata(copy, edit, report);
        case ModelEditKind::ConvertOpset:
            return convertOpset(copy, edit, report);
    }
    return makeError("", "unknown edit");
}

Status runEdit(onnx::ModelProto& copy, const ModelEdit& edit, const ModelEditOptions& options,
               ModelEditReport& report) {
    report.description = edit.describe();
    Status status = Ok{};
    try {
        status = dispatch(copy, edit, options, report);
    } catch (const std::exception& e) {
        status = makeError("", e.what());
    }
    if (!status) return makeError(edit.describe(), status.error().message);
    return Ok{};
}

}  // namespace

Status applyModelEdit(onnx::ModelProto& model, const ModelEdit& edit,
                      const ModelEditOptions& options, ModelEditReport* report) {
    ModelEditReport local;
    onnx::ModelProto copy = stubbedCopy(model);
    auto status = runEdit(copy, edit, options, local);
    if (!status) return status;
    commitCopy(model, copy, edit.kind == ModelEditKind::ConvertOpset);
    if (report) *report = std::move(local);
    return Ok{};
}

Status previewModelEdit(const onnx::ModelProto& model, const ModelEdit& edit,
                        const ModelEditOptions& options, ModelEditReport* report) {
    ModelEditReport local;
    onnx::ModelProto copy = stubbedCopy(model);
    auto status = runEdit(copy, edit, options, local);
    if (!status) return status;
    if (report) *report = std::move(local);
    return Ok{};
}

}  // namespace onnxlens
