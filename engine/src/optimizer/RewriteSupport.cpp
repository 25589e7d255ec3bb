#include "optimizer/RewriteSupport.h"

#include <algorithm>
#include <cmath>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens::engine {

namespace {

// The node's attribute `name`, emptied, or a new one: a node never gets the same name twice
// (readers take the first, so a second would be ignored).
onnx::AttributeProto* attributeToSet(onnx::NodeProto& node, const std::string& name) {
    for (auto& a : *node.mutable_attribute())
        if (a.name() == name) {
            a.Clear();
            a.set_name(name);
            return &a;
        }
    auto* a = node.add_attribute();
    a->set_name(name);
    return a;
}

}  // namespace

void setIntAttribute(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
    auto* a = attributeToSet(node, name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

void setStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
    auto* a = attributeToSet(node, name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
}

onnx::NodeProto makeNode(const std::string& op, const std::string& domain, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output) {
    onnx::NodeProto node;
    node.set_op_type(op);
    node.set_domain(domain);
    node.set_name(name);
    for (const auto& in : inputs) node.add_input(in);
    node.add_output(output);
    return node;
}

void renameUses(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
    for (auto& node : *graph.mutable_node()) {
        for (auto& in : *node.mutable_input())
            if (in == from) in = to;
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_g()) renameUses(*attr.mutable_g(), from, to);
            for (auto& g : *attr.mutable_graphs()) renameUses(g, from, to);
        }
    }
}

void removeNodes(onnx::GraphProto& graph, const std::vector<bool>& remove) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph.node_size(); ++i)
        if (!remove[static_cast<std::size_t>(i)]) kept.Add(std::move(*graph.mutable_node(i)));
    graph.mutable_node()->Swap(&kept);
}

void removeUnreadInitializers(onnx::GraphProto& graph,
                              const std::unordered_set<std::string>* among) {
    const GraphIndex index(graph);
    google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
    for (auto& init : *graph.mutable_initializer())
        if ((among && !among->count(init.name())) || index.readCount(init.name()) > 0 ||
            index.isGraphInput(init.name()))
            kept.Add(std::move(init));
    graph.mutable_initializer()->Swap(&kept);
}

std::optional<Tensor> constantTensor(const GraphIndex& index, const std::string& name,
                                     const std::filesystem::path& modelDirectory) {
    const auto* proto = index.constant(name);
    if (!proto) return std::nullopt;
    try {
        return tensorFromProto(*proto, modelDirectory);
    } catch (const EngineError&) {
        return std::nullopt;
    }
}

std::optional<double> constantScalar(const GraphIndex& index, const std::string& name) {
    const auto* proto = index.constant(name);
    // Checked from the dims first, so that a large weight is never decoded to find out.
    if (!proto || elementCount(*proto).value_or(0) != 1) return std::nullopt;
    auto t = constantTensor(index, name);
    if (!t || t->numel() != 1 || !isFloatingPoint(t->dtype())) return std::nullopt;
    return t->valueAsDouble(0);
}

bool constantScalarNear(const GraphIndex& index, const std::string& name, double expected) {
    auto v = constantScalar(index, name);
    return v && std::abs(*v - expected) <= 1e-4 * std::max(1.0, std::abs(expected));
}

bool Rewriter::free(const std::vector<int>& nodes) const {
    for (int n : nodes)
        if (used_.count(n)) return false;
    return true;
}

void Rewriter::replace(const std::vector<int>& nodes, onnx::NodeProto fused) {
    int last = nodes.front();
    for (int n : nodes) last = std::max(last, n);
    for (int n : nodes) used_.insert(n);
    replacements_[last] = std::move(fused);
    ++count_;
}

int Rewriter::apply() {
    if (count_ == 0) return 0;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph_.node_size(); ++i) {
        auto r = replacements_.find(i);
        if (r != replacements_.end())
            kept.Add(std::move(r->second));
        else if (!used_.count(i))
            kept.Add(std::move(*graph_.mutable_node(i)));
    }
    graph_.mutable_node()->Swap(&kept);
    return count_;
}

// A constant initializer's dims and element type, read without decoding its data.
std::optional<std::vector<std::int64_t>> initializerDims(const GraphIndex& index,
                                                         const std::string& name) {
    const auto* init = index.constantInitializer(name);
    if (!init) return std::nullopt;
    return std::vector<std::int64_t>(init->dims().begin(), init->dims().end());
}
std::optional<int> initializerType(const GraphIndex& index, const std::string& name) {
    const auto* init = index.constantInitializer(name);
    if (!init) return std::nullopt;
    return init->data_type();
}

// For a two-input node, the input that is not `known` (or "" when neither or both are).
std::string otherInput(const onnx::NodeProto& node, const std::string& known) {
    if (node.input_size() != 2) return {};
    if (node.input(0) == known && node.input(1) != known) return node.input(1);
    if (node.input(1) == known && node.input(0) != known) return node.input(0);
    return {};
}

ValueNames::ValueNames(const onnx::GraphProto& graph) {
    for (const auto& in : graph.input()) names_.insert(in.name());
    for (const auto& init : graph.initializer()) names_.insert(init.name());
    for (const auto& node : graph.node())
        for (const auto& o : node.output()) names_.insert(o);
}

std::optional<ValueNames> ValueNames::inDependencyOrder(const onnx::GraphProto& graph) {
    ValueNames names;
    for (const auto& in : graph.input()) names.add(in.name());
    for (const auto& init : graph.initializer()) names.add(init.name());
    for (const auto& node : graph.node()) {
        for (const auto& in : node.input())
            if (!in.empty() && !names.contains(in)) return std::nullopt;
        for (const auto& o : node.output())
            if (!o.empty() && !names.add(o)) return std::nullopt;
    }
    return names;
}

std::string ValueNames::unused(const std::string& base) const {
    std::string name = base;
    for (int k = 2; contains(name); ++k) name = base + "_" + std::to_string(k);
    return name;
}

std::string ValueNames::fresh(const std::string& base) {
    std::string name = unused(base);
    add(name);
    return name;
}

// The sole reader of `value` when it is an `op` node, or -1.
int soleReaderOp(const GraphIndex& index, const std::string& value, const char* op) {
    const int r = index.soleConsumer(value);
    return r >= 0 && isOnnxOp(index.node(r), op) ? r : -1;
}

}  // namespace onnxlens::engine
