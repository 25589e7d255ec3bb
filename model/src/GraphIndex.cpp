#include "onnxlens/model/GraphIndex.h"

#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens {

GraphIndex::GraphIndex(const onnx::GraphProto& graph) : graph_(&graph) {
    for (const auto& in : graph.input()) graphInputs_.insert(in.name());
    for (const auto& init : graph.initializer())
        if (!graphInputs_.count(init.name())) constantInitializers_[init.name()] = &init;
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        for (const auto& o : node.output())
            if (!o.empty()) producer_[o] = i;
        for (const auto& in : node.input())
            if (!in.empty()) consumers_[in].push_back(i);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) noteSubgraphReads(a.g());
            for (const auto& g : a.graphs()) noteSubgraphReads(g);
        }
    }
    for (const auto& o : graph.output()) ++graphOutputs_[o.name()];
}

void GraphIndex::noteSubgraphReads(const onnx::GraphProto& subgraph) {
    for (const auto& n : subgraph.node()) {
        for (const auto& in : n.input())
            if (!in.empty()) ++subgraphReads_[in];
        for (const auto& a : n.attribute()) {
            if (a.has_g()) noteSubgraphReads(a.g());
            for (const auto& g : a.graphs()) noteSubgraphReads(g);
        }
    }
    for (const auto& o : subgraph.output()) ++subgraphReads_[o.name()];
}

int GraphIndex::producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& GraphIndex::consumers(const std::string& value) const {
    static const std::vector<int> none;
    auto it = consumers_.find(value);
    return it == consumers_.end() ? none : it->second;
}

int GraphIndex::readCount(const std::string& value) const {
    int count = static_cast<int>(consumers(value).size());
    if (auto it = subgraphReads_.find(value); it != subgraphReads_.end()) count += it->second;
    if (auto it = graphOutputs_.find(value); it != graphOutputs_.end()) count += it->second;
    return count;
}

int GraphIndex::soleConsumer(const std::string& value) const {
    const auto& readers = consumers(value);
    return readers.size() == 1 && readCount(value) == 1 ? readers[0] : -1;
}

int GraphIndex::exclusiveProducer(const std::string& value) const {
    return soleConsumer(value) >= 0 ? producer(value) : -1;
}

int GraphIndex::exclusiveConsumerCount(const std::string& value) const {
    if (readInSubgraph(value) || isGraphOutput(value)) return -1;
    return static_cast<int>(consumers(value).size());
}

const onnx::TensorProto* GraphIndex::constantInitializer(const std::string& name) const {
    auto it = constantInitializers_.find(name);
    return it == constantInitializers_.end() ? nullptr : it->second;
}

const onnx::TensorProto* GraphIndex::constant(const std::string& name) const {
    if (const auto* init = constantInitializer(name)) return init;
    const int p = producer(name);
    if (p < 0 || !isOnnxOp(node(p), "Constant")) return nullptr;
    for (const auto& a : node(p).attribute())
        if (a.name() == "value" && a.has_t()) return &a.t();
    return nullptr;
}

bool hasSubgraph(const onnx::NodeProto& node) {
    for (const auto& a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

}  // namespace onnxlens
