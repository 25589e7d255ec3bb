#include <string>

#include "CompiledGraph.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine {

namespace {
const onnx::AttributeProto& requireAttribute(const NodeInfo& node, const std::string& name,
                                             onnx::AttributeProto::AttributeType type) {
    const auto* a = node.find(name);
    if (!a) throw EngineError("required attribute '" + name + "' is missing");
    if (a->type() != type && a->type() != onnx::AttributeProto::UNDEFINED)
        throw EngineError("attribute '" + name + "' has the wrong type");
    return *a;
}
}  // namespace

const onnx::AttributeProto* NodeInfo::find(const std::string& name) const {
    for (const auto& a : node_.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t NodeInfo::getInt(const std::string& name, std::int64_t fallback) const {
    const auto* a = find(name);
    return a ? a->i() : fallback;
}
std::int64_t NodeInfo::getInt(const std::string& name) const {
    return requireAttribute(*this, name, onnx::AttributeProto::INT).i();
}
float NodeInfo::getFloat(const std::string& name, float fallback) const {
    const auto* a = find(name);
    return a ? a->f() : fallback;
}
float NodeInfo::getFloat(const std::string& name) const {
    return requireAttribute(*this, name, onnx::AttributeProto::FLOAT).f();
}
std::string NodeInfo::getString(const std::string& name, const std::string& fallback) const {
    const auto* a = find(name);
    return a ? a->s() : fallback;
}
std::string NodeInfo::getString(const std::string& name) const {
    return requireAttribute(*this, name, onnx::AttributeProto::STRING).s();
}
std::vector<std::int64_t> NodeInfo::getInts(const std::string& name,
                                            std::vector<std::int64_t> fallback) const {
    const auto* a = find(name);
    if (!a) return fallback;
    return {a->ints().begin(), a->ints().end()};
}
std::vector<float> NodeInfo::getFloats(const std::string& name, std::vector<float> fallback) const {
    const auto* a = find(name);
    if (!a) return fallback;
    return {a->floats().begin(), a->floats().end()};
}
std::vector<std::string> NodeInfo::getStrings(const std::string& name,
                                              std::vector<std::string> fallback) const {
    const auto* a = find(name);
    if (!a) return fallback;
    return {a->strings().begin(), a->strings().end()};
}
std::optional<Tensor> NodeInfo::getTensor(const std::string& name) const {
    const auto* a = find(name);
    if (!a || !a->has_t()) return std::nullopt;
    return tensorFromProto(a->t());
}
std::shared_ptr<CompiledGraph> NodeInfo::compileGraph(const std::string& attributeName) const {
    const auto* a = find(attributeName);
    if (!a || !a->has_g()) throw EngineError("graph attribute '" + attributeName + "' is missing");
    if (!compileSubgraph_) throw EngineError("subgraphs cannot be compiled in this context");
    return compileSubgraph_(a->g());
}

std::vector<Value> KernelContext::runSubgraph(const CompiledGraph& graph,
                                              std::vector<Value> inputs) const {
    return graph.run(pool_, std::move(inputs), frame_, cancel_, nullptr);
}

}  // namespace onnxlens::engine
