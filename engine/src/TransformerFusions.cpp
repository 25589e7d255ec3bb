// The transformer fusions of the graph optimizer: the GELU and LayerNormalization patterns that
// PyTorch's exporter writes as chains of elementwise nodes, and MatMul + bias (+ GELU) as one
// com.onnxlens FusedMatMul whose epilogue runs inside the product (oneDNN post-ops).
//
// Each pass matches a chain whose intermediate values have exactly one reader (no graph output,
// no subgraph read), replaces the chain's last node by the fused node (everything it reads is
// computed by then) and removes the rest.
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine {

namespace {

bool inDefaultDomain(const onnx::NodeProto& node) {
    return node.domain().empty() || node.domain() == "ai.onnx";
}

int defaultDomainOpset(const onnx::ModelProto& model) {
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

bool isOp(const onnx::NodeProto& node, const char* op) {
    return inDefaultDomain(node) && node.op_type() == op;
}

// For a two-input node, the input that is not `known` (or "" when neither or both are).
std::string otherInput(const onnx::NodeProto& node, const std::string& known) {
    if (node.input_size() != 2) return {};
    if (node.input(0) == known && node.input(1) != known) return node.input(1);
    if (node.input(1) == known && node.input(0) != known) return node.input(0);
    return {};
}

// The sole reader of `value` when it is an `op` node, or -1.
int soleReaderOp(const GraphIndex& index, const std::string& value, const char* op) {
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

void setStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
}

const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

// ---- GELU -------------------------------------------------------------------------------------

// x / sqrt(2) or x * (1 / sqrt(2)) feeding the Erf: x, or "" when `value` is not that.
std::string geluInput(const GraphIndex& index, const std::string& value, int& scaleNode) {
    scaleNode = index.exclusiveProducer(value);
    if (scaleNode < 0) return {};
    const auto& n = index.node(scaleNode);
    if (n.input_size() != 2) return {};
    if (isOp(n, "Div") && index.scalarNear(n.input(1), std::sqrt(2.0))) return n.input(0);
    if (isOp(n, "Mul")) {
        for (int side = 0; side < 2; ++side)
            if (index.scalarNear(n.input(side), 1.0 / std::sqrt(2.0))) return n.input(1 - side);
    }
    return {};
}

}  // namespace

int fuseGelu(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const GraphIndex index(graph);
    const bool onnxGelu = defaultDomainOpset(model) >= 20;
    Rewriter rewriter(graph);
    for (int e = 0; e < graph.node_size(); ++e) {
        const auto& erf = graph.node(e);
        if (!isOp(erf, "Erf") || erf.input_size() != 1 || erf.output_size() != 1) continue;
        int scale = -1;
        const std::string x = geluInput(index, erf.input(0), scale);
        if (x.empty()) continue;
        // 1 + erf(...)
        const int add = soleReaderOp(index, erf.output(0), "Add");
        if (add < 0 || !index.scalarNear(otherInput(index.node(add), erf.output(0)), 1.0)) continue;
        const std::string& onePlus = index.node(add).output(0);
        // The product of x, 0.5 and (1 + erf) in one of the exporters' orders.
        const int m1 = soleReaderOp(index, onePlus, "Mul");
        if (m1 < 0) continue;
        const std::string o1 = otherInput(index.node(m1), onePlus);
        std::vector<int> chain{scale, e, add, m1};
        std::string output;
        if (o1 == x || index.scalarNear(o1, 0.5)) {
            // (x * t) * 0.5  or  (0.5 * t) * x
            const int m2 = soleReaderOp(index, index.node(m1).output(0), "Mul");
            if (m2 < 0) continue;
            const std::string o2 = otherInput(index.node(m2), index.node(m1).output(0));
            if (!(o1 == x ? index.scalarNear(o2, 0.5) : o2 == x)) continue;
            chain.push_back(m2);
            output = index.node(m2).output(0);
        } else {
            // (x * 0.5) * t
            const int half = index.exclusiveProducer(o1);
            if (half < 0 || !isOp(index.node(half), "Mul") ||
                !index.scalarNear(otherInput(index.node(half), x), 0.5))
                continue;
            chain.push_back(half);
            output = index.node(m1).output(0);
        }
        if (!rewriter.free(chain)) continue;
        rewriter.replace(chain, makeNode("Gelu", onnxGelu ? "" : kOnnxlensDomain,
                                         erf.name().empty() ? output : erf.name(), {x}, output));
    }
    const int rewrites = rewriter.apply();
    if (rewrites && !onnxGelu) importOnnxlensDomain(model);
    return rewrites;
}

namespace {

// ---- LayerNormalization -----------------------------------------------------------------------

// True when a ReduceMean keeps its dims and reduces the last axis only (attribute before opset
// 18, a constant input since).
bool reducesLastAxisOnly(const GraphIndex& index, const onnx::NodeProto& mean) {
    if (const auto* keep = findAttribute(mean, "keepdims"); keep && keep->i() == 0) return false;
    std::vector<std::int64_t> axes;
    if (const auto* a = findAttribute(mean, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
    } else if (mean.input_size() >= 2 && !mean.input(1).empty()) {
        auto t = index.constant(mean.input(1));
        if (!t) return false;
        axes = t->toInt64Vector();
    }
    return axes.size() == 1 && axes[0] == -1;
}

// A rank-1 floating constant of the same element type as the first of `names`.
bool sameTypeVectors(const GraphIndex& index, const std::vector<std::string>& names) {
    std::optional<int> type;
    for (const auto& name : names) {
        auto dims = index.constantDims(name);
        auto t = index.constantType(name);
        if (!dims || !t || dims->size() != 1) return false;
        if (type && *type != *t) return false;
        type = t;
    }
    return true;
}

}  // namespace

int fuseLayerNormalization(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const GraphIndex index(graph);
    const bool onnxLayerNorm = defaultDomainOpset(model) >= 17;
    Rewriter rewriter(graph);
    for (int r1 = 0; r1 < graph.node_size(); ++r1) {
        const auto& mean = graph.node(r1);
        if (!isOp(mean, "ReduceMean") || !reducesLastAxisOnly(index, mean)) continue;
        const std::string& x = mean.input(0);
        // d = x - mean(x)
        const int sub = soleReaderOp(index, mean.output(0), "Sub");
        if (sub < 0 || index.node(sub).input(0) != x || index.node(sub).input(1) != mean.output(0))
            continue;
        const std::string& d = index.node(sub).output(0);
        if (index.readerCount(d) != 2) continue;
        // var = mean(d ^ 2); std = sqrt(var + eps); y = d / std
        int pow = -1, div = -1;
        for (int i = 0; i < graph.node_size() && (pow < 0 || div < 0); ++i) {
            const auto& n = graph.node(i);
            if (n.input_size() == 2 && n.input(0) == d) {
                if (isOp(n, "Pow") && index.scalarNear(n.input(1), 2.0)) pow = i;
                if (isOp(n, "Div")) div = i;
            }
        }
        if (pow < 0 || div < 0) continue;
        const int r2 = soleReaderOp(index, index.node(pow).output(0), "ReduceMean");
        if (r2 < 0 || !reducesLastAxisOnly(index, index.node(r2))) continue;
        const int addEps = soleReaderOp(index, index.node(r2).output(0), "Add");
        if (addEps < 0) continue;
        const auto eps = index.scalar(otherInput(index.node(addEps), index.node(r2).output(0)));
        if (!eps || *eps < 0) continue;
        const int sqrt = soleReaderOp(index, index.node(addEps).output(0), "Sqrt");
        if (sqrt < 0 || index.node(div).input(1) != index.node(sqrt).output(0) ||
            index.soleReader(index.node(sqrt).output(0)) != div)
            continue;
        // y * gamma + beta
        const int mul = soleReaderOp(index, index.node(div).output(0), "Mul");
        if (mul < 0) continue;
        const std::string gamma = otherInput(index.node(mul), index.node(div).output(0));
        const int addBeta = soleReaderOp(index, index.node(mul).output(0), "Add");
        if (addBeta < 0) continue;
        const std::string beta = otherInput(index.node(addBeta), index.node(mul).output(0));
        if (gamma.empty() || beta.empty() || !sameTypeVectors(index, {gamma, beta})) continue;
        const std::vector<int> chain{r1, sub, pow, r2, addEps, sqrt, div, mul, addBeta};
        if (!rewriter.free(chain)) continue;
        const std::string& output = index.node(addBeta).output(0);
        onnx::NodeProto fused =
            makeNode("LayerNormalization", onnxLayerNorm ? "" : kOnnxlensDomain,
                     mean.name().empty() ? output : mean.name(), {x, gamma, beta}, output);
        auto* axis = fused.add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(-1);
        auto* epsilon = fused.add_attribute();
        epsilon->set_name("epsilon");
        epsilon->set_type(onnx::AttributeProto::FLOAT);
        epsilon->set_f(static_cast<float>(*eps));
        rewriter.replace(chain, std::move(fused));
    }
    const int rewrites = rewriter.apply();
    if (rewrites && !onnxLayerNorm) importOnnxlensDomain(model);
    return rewrites;
}

int fuseMatMulBias(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const GraphIndex index(graph);
    Rewriter rewriter(graph);
    for (int m = 0; m < graph.node_size(); ++m) {
        const auto& matmul = graph.node(m);
        if (!isOp(matmul, "MatMul") || matmul.input_size() != 2) continue;
        // Constant 2-D weights [K, N] and an Add of a constant [N] of their type.
        auto weights = index.constantDims(matmul.input(1));
        if (!weights || weights->size() != 2) continue;
        const int add = soleReaderOp(index, matmul.output(0), "Add");
        if (add < 0) continue;
        const std::string bias = otherInput(index.node(add), matmul.output(0));
        auto biasDims = index.constantDims(bias);
        if (!biasDims || biasDims->size() != 1 || (*biasDims)[0] != (*weights)[1] ||
            index.constantType(bias) != index.constantType(matmul.input(1)))
            continue;
        if (!rewriter.free({m, add})) continue;
        const std::string& output = index.node(add).output(0);
        rewriter.replace({m, add}, makeNode("FusedMatMul", kOnnxlensDomain,
                                            matmul.name().empty() ? output : matmul.name(),
                                            {matmul.input(0), matmul.input(1), bias}, output));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(model);
    return rewrites;
}

int fuseMatMulGelu(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const GraphIndex index(graph);
    Rewriter rewriter(graph);
    for (int m = 0; m < graph.node_size(); ++m) {
        const auto& matmul = graph.node(m);
        if (matmul.domain() != kOnnxlensDomain || matmul.op_type() != "FusedMatMul" ||
            findAttribute(matmul, "activation"))
            continue;
        const int g = index.soleReader(matmul.output(0));
        if (g < 0) continue;
        const auto& gelu = index.node(g);
        const bool isGelu =
            gelu.op_type() == "Gelu" && (gelu.domain() == kOnnxlensDomain || inDefaultDomain(gelu));
        const auto* approximate = findAttribute(gelu, "approximate");
        if (!isGelu || (approximate && approximate->s() != "none")) continue;
        if (!rewriter.free({m, g})) continue;
        onnx::NodeProto fused = matmul;
        fused.set_output(0, gelu.output(0));
        setStringAttribute(fused, "activation", "Gelu");
        rewriter.replace({m, g}, std::move(fused));
    }
    return rewriter.apply();
}

}  // namespace onnxlens::engine
