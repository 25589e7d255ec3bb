#pragma once
// What the fusion passes share to match node chains in the top-level graph (who produces and who
// reads each value, constants, the attribute helpers) and to rewrite them (Rewriter).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine::fusion {

inline bool inDefaultDomain(const onnx::NodeProto& node) {
    return node.domain().empty() || node.domain() == "ai.onnx";
}

inline int defaultDomainOpset(const onnx::ModelProto& model) {
    for (const auto& imp : model.opset_import())
        if (imp.domain().empty() || imp.domain() == "ai.onnx")
            return static_cast<int>(imp.version());
    return 1;
}

// Who produces and who reads each value of the top-level graph; values read by a graph output
// or inside a subgraph count as read by nobody that a fusion may remove.
class GraphIndex {
  public:
    explicit GraphIndex(const onnx::GraphProto& graph) : graph_(graph) {
        for (const auto& init : graph.initializer()) initializers_[init.name()] = &init;
        for (const auto& in : graph.input()) initializers_.erase(in.name());  // overridable
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            for (const auto& o : node.output()) producer_[o] = i;
            for (const auto& in : node.input()) readers_[in].push_back(i);
            for (const auto& a : node.attribute()) {
                if (a.has_g()) markSubgraphReads(a.g());
                for (const auto& g : a.graphs()) markSubgraphReads(g);
            }
        }
        for (const auto& o : graph.output()) pinned_.insert(o.name());
    }

    const onnx::NodeProto& node(int i) const { return graph_.node(i); }

    // The node reading `value` when it is its only reader, or -1.
    int soleReader(const std::string& value) const {
        if (pinned_.count(value)) return -1;
        auto it = readers_.find(value);
        if (it == readers_.end() || it->second.size() != 1) return -1;
        return it->second[0];
    }
    int readerCount(const std::string& value) const {
        if (pinned_.count(value)) return -1;
        auto it = readers_.find(value);
        return it == readers_.end() ? 0 : static_cast<int>(it->second.size());
    }
    // The node computing `value`, or -1 (graph inputs, initializers).
    int producer(const std::string& value) const {
        auto p = producer_.find(value);
        return p == producer_.end() ? -1 : p->second;
    }
    // The producer of `value` when value is read by nothing but `reader`, or -1.
    int exclusiveProducer(const std::string& value) const {
        auto p = producer_.find(value);
        if (p == producer_.end() || soleReader(value) < 0) return -1;
        return p->second;
    }

    // A constant's value: an initializer that is not a graph input, or a Constant node's.
    std::optional<Tensor> constant(const std::string& name) const {
        try {
            auto it = initializers_.find(name);
            if (it != initializers_.end()) return tensorFromProto(*it->second, {});
            auto p = producer_.find(name);
            if (p == producer_.end()) return std::nullopt;
            const auto& n = graph_.node(p->second);
            if (!inDefaultDomain(n) || n.op_type() != "Constant") return std::nullopt;
            for (const auto& a : n.attribute())
                if (a.name() == "value" && a.has_t()) return tensorFromProto(a.t(), {});
        } catch (const EngineError&) {
        }
        return std::nullopt;
    }
    // The constant's dims without reading its data (initializers only).
    std::optional<std::vector<std::int64_t>> constantDims(const std::string& name) const {
        auto it = initializers_.find(name);
        if (it == initializers_.end()) return std::nullopt;
        return std::vector<std::int64_t>(it->second->dims().begin(), it->second->dims().end());
    }
    std::optional<int> constantType(const std::string& name) const {
        auto it = initializers_.find(name);
        if (it == initializers_.end()) return std::nullopt;
        return it->second->data_type();
    }
    // A single-element floating constant's value.
    std::optional<double> scalar(const std::string& name) const {
        auto dims = constantDims(name);
        if (dims) {
            std::int64_t count = 1;
            for (auto d : *dims) count *= d;
            if (count != 1) return std::nullopt;
        }
        auto t = constant(name);
        if (!t || t->numel() != 1 || !isFloatingPoint(t->dtype())) return std::nullopt;
        return t->valueAsDouble(0);
    }
    bool scalarNear(const std::string& name, double expected) const {
        auto v = scalar(name);
        return v && std::abs(*v - expected) <= 1e-4 * std::max(1.0, std::abs(expected));
    }

  private:
    void markSubgraphReads(const onnx::GraphProto& g) {
        for (const auto& n : g.node()) {
            for (const auto& in : n.input()) pinned_.insert(in);
            for (const auto& a : n.attribute()) {
                if (a.has_g()) markSubgraphReads(a.g());
                for (const auto& sg : a.graphs()) markSubgraphReads(sg);
            }
        }
        for (const auto& o : g.output()) pinned_.insert(o.name());
    }

    const onnx::GraphProto& graph_;
    std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
    std::unordered_map<std::string, int> producer_;
    std::unordered_map<std::string, std::vector<int>> readers_;
    std::unordered_set<std::string> pinned_;
};

inline bool isOp(const onnx::NodeProto& node, const char* op) {
    return inDefaultDomain(node) && node.op_type() == op;
}

// For a two-input node, the input that is not `known` (or "" when neither or both are).
inline std::string otherInput(const onnx::NodeProto& node, const std::string& known) {
    if (node.input_size() != 2) return {};
    if (node.input(0) == known && node.input(1) != known) return node.input(1);
    if (node.input(1) == known && node.input(0) != known) return node.input(0);
    return {};
}

// The sole reader of `value` when it is an `op` node, or -1.
inline int soleReaderOp(const GraphIndex& index, const std::string& value, const char* op) {
    const int r = index.soleReader(value);
    return r >= 0 && isOp(index.node(r), op) ? r : -1;
}

// The pending rewrites of one pass: the node replacing each chain and the nodes removed.
class Rewriter {
  public:
    explicit Rewriter(onnx::GraphProto& graph) : graph_(graph) {}
    // True when none of `nodes` is part of an earlier rewrite of this pass.
    bool free(const std::vector<int>& nodes) const {
        for (int n : nodes)
            if (used_.count(n)) return false;
        return true;
    }
    // `fused` takes the place of the last of `nodes`; the others are removed.
    void replace(const std::vector<int>& nodes, onnx::NodeProto fused) {
        int last = nodes.front();
        for (int n : nodes) last = std::max(last, n);
        for (int n : nodes) used_.insert(n);
        replacements_[last] = std::move(fused);
        ++count_;
    }
    int apply() {
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

  private:
    onnx::GraphProto& graph_;
    std::unordered_set<int> used_;
    std::unordered_map<int, onnx::NodeProto> replacements_;
    int count_ = 0;
};

inline onnx::NodeProto makeNode(const std::string& op, const std::string& domain,
                                const std::string& name, const std::vector<std::string>& inputs,
                                const std::string& output) {
    onnx::NodeProto node;
    node.set_op_type(op);
    node.set_domain(domain);
    node.set_name(name);
    for (const auto& in : inputs) node.add_input(in);
    node.add_output(output);
    return node;
}

inline void setStringAttribute(onnx::NodeProto& node, const std::string& name,
                               const std::string& value) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
}

inline const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node,
                                                 const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

}  // namespace onnxlens::engine::fusion
