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
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

// ---- GELU -------------------------------------------------------------------------------------

// x / sqrt(2) or x * (1 / sqrt(2)) feeding the Erf: x, or "" when `value` is not that.
std::string geluInput(const GraphIndex& index, const std::string& value, int& scaleNode) {
    scaleNode = index.exclusiveProducer(value);
    if (scaleNode < 0) return {};
    const auto& n = index.node(scaleNode);
    if (n.input_size() != 2) return {};
    if (isOnnxOp(n, "Div") && constantScalarNear(index, n.input(1), std::sqrt(2.0)))
        return n.input(0);
    if (isOnnxOp(n, "Mul")) {
        for (int side = 0; side < 2; ++side)
            if (constantScalarNear(index, n.input(side), 1.0 / std::sqrt(2.0)))
                return n.input(1 - side);
    }
    return {};
}

}  // namespace

int fuseGelu(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    const bool onnxGelu = context.defaultOpset() >= 20;
    Rewriter rewriter(graph);
    for (int e = 0; e < graph.node_size(); ++e) {
        const auto& erf = graph.node(e);
        if (!isOnnxOp(erf, "Erf") || erf.input_size() != 1 || erf.output_size() != 1) continue;
        int scale = -1;
        const std::string x = geluInput(index, erf.input(0), scale);
        if (x.empty()) continue;
        // 1 + erf(...)
        const int add = soleReaderOp(index, erf.output(0), "Add");
        if (add < 0 || !constantScalarNear(index, otherInput(index.node(add), erf.output(0)), 1.0))
            continue;
        const std::string& onePlus = index.node(add).output(0);
        // The product of x, 0.5 and (1 + erf) in one of the exporters' orders.
        const int m1 = soleReaderOp(index, onePlus, "Mul");
        if (m1 < 0) continue;
        const std::string o1 = otherInput(index.node(m1), onePlus);
        std::vector<int> chain{scale, e, add, m1};
        std::string output;
        if (o1 == x || constantScalarNear(index, o1, 0.5)) {
            // (x * t) * 0.5  or  (0.5 * t) * x
            const int m2 = soleReaderOp(index, index.node(m1).output(0), "Mul");
            if (m2 < 0) continue;
            const std::string o2 = otherInput(index.node(m2), index.node(m1).output(0));
            if (!(o1 == x ? constantScalarNear(index, o2, 0.5) : o2 == x)) continue;
            chain.push_back(m2);
            output = index.node(m2).output(0);
        } else {
            // (x * 0.5) * t
            const int half = index.exclusiveProducer(o1);
            if (half < 0 || !isOnnxOp(index.node(half), "Mul") ||
                !constantScalarNear(index, otherInput(index.node(half), x), 0.5))
                continue;
            chain.push_back(half);
            output = index.node(m1).output(0);
        }
        if (!rewriter.free(chain)) continue;
        rewriter.replace(chain, makeNode("Gelu", onnxGelu ? "" : kOnnxlensDomain,
                                         erf.name().empty() ? output : erf.name(), {x}, output));
    }
    const int rewrites = rewriter.apply();
    if (rewrites && !onnxGelu) importOnnxlensDomain(context.model());
    return rewrites;
}

// x * Sigmoid(x) (SiLU, Swish with beta 1: the MLP activation of Llama-style decoders and of
// EfficientNet/YOLO blocks, exported as two nodes) as one com.onnxlens QuickGelu with alpha 1,
// which computes x * logistic(alpha x) in one pass; ONNX Runtime fuses it the same way.
int fuseSilu(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    Rewriter rewriter(graph);
    for (int s = 0; s < graph.node_size(); ++s) {
        const auto& sigmoid = graph.node(s);
        if (!isOnnxOp(sigmoid, "Sigmoid") || sigmoid.input_size() != 1 ||
            sigmoid.output_size() != 1)
            continue;
        const std::string& x = sigmoid.input(0);
        const int mul = soleReaderOp(index, sigmoid.output(0), "Mul");
        if (mul < 0 || index.node(mul).input_size() != 2 ||
            otherInput(index.node(mul), sigmoid.output(0)) != x)
            continue;
        if (!rewriter.free({s, mul})) continue;
        const std::string& output = index.node(mul).output(0);
        onnx::NodeProto fused =
            makeNode("QuickGelu", kOnnxlensDomain, sigmoid.name().empty() ? output : sigmoid.name(),
                     {x}, output);
        auto* alpha = fused.add_attribute();
        alpha->set_name("alpha");
        alpha->set_type(onnx::AttributeProto::FLOAT);
        alpha->set_f(1.0f);
        rewriter.replace({s, mul}, std::move(fused));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(context.model());
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
        auto t = constantTensor(index, mean.input(1));
        if (!t) return false;
        axes = t->toInt64Vector();
    }
    return axes.size() == 1 && axes[0] == -1;
}

// A rank-1 floating constant of the same element type as the first of `names`.
bool sameTypeVectors(const GraphIndex& index, const std::vector<std::string>& names) {
    std::optional<int> type;
    for (const auto& name : names) {
        auto dims = initializerDims(index, name);
        auto t = initializerType(index, name);
        if (!dims || !t || dims->size() != 1) return false;
        if (type && *type != *t) return false;
        type = t;
    }
    return true;
}

}  // namespace

int fuseLayerNormalization(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    const bool onnxLayerNorm = context.defaultOpset() >= 17;
    Rewriter rewriter(graph);
    for (int r1 = 0; r1 < graph.node_size(); ++r1) {
        const auto& mean = graph.node(r1);
        if (!isOnnxOp(mean, "ReduceMean") || !reducesLastAxisOnly(index, mean)) continue;
        const std::string& x = mean.input(0);
        // d = x - mean(x)
        const int sub = soleReaderOp(index, mean.output(0), "Sub");
        if (sub < 0 || index.node(sub).input(0) != x || index.node(sub).input(1) != mean.output(0))
            continue;
        const std::string& d = index.node(sub).output(0);
        if (index.exclusiveConsumerCount(d) != 2) continue;
        // var = mean(d ^ 2); std = sqrt(var + eps); y = d / std
        int pow = -1, div = -1;
        for (int i = 0; i < graph.node_size() && (pow < 0 || div < 0); ++i) {
            const auto& n = graph.node(i);
            if (n.input_size() == 2 && n.input(0) == d) {
                if (isOnnxOp(n, "Pow") && constantScalarNear(index, n.input(1), 2.0)) pow = i;
                if (isOnnxOp(n, "Div")) div = i;
            }
        }
        if (pow < 0 || div < 0) continue;
        const int r2 = soleReaderOp(index, index.node(pow).output(0), "ReduceMean");
        if (r2 < 0 || !reducesLastAxisOnly(index, index.node(r2))) continue;
        const int addEps = soleReaderOp(index, index.node(r2).output(0), "Add");
        if (addEps < 0) continue;
        const auto eps =
            constantScalar(index, otherInput(index.node(addEps), index.node(r2).output(0)));
        if (!eps || *eps < 0) continue;
        const int sqrt = soleReaderOp(index, index.node(addEps).output(0), "Sqrt");
        if (sqrt < 0 || index.node(div).input(1) != index.node(sqrt).output(0) ||
            index.soleConsumer(index.node(sqrt).output(0)) != div)
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
    if (rewrites && !onnxLayerNorm) importOnnxlensDomain(context.model());
    return rewrites;
}

int fuseMatMulBias(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    Rewriter rewriter(graph);
    for (int m = 0; m < graph.node_size(); ++m) {
        const auto& matmul = graph.node(m);
        if (!isOnnxOp(matmul, "MatMul") || matmul.input_size() != 2) continue;
        // Constant 2-D weights [K, N] and an Add of a constant [N] of their type.
        auto weights = initializerDims(index, matmul.input(1));
        if (!weights || weights->size() != 2) continue;
        const int add = soleReaderOp(index, matmul.output(0), "Add");
        if (add < 0) continue;
        const std::string bias = otherInput(index.node(add), matmul.output(0));
        auto biasDims = initializerDims(index, bias);
        if (!biasDims || biasDims->size() != 1 || (*biasDims)[0] != (*weights)[1] ||
            initializerType(index, bias) != initializerType(index, matmul.input(1)))
            continue;
        if (!rewriter.free({m, add})) continue;
        const std::string& output = index.node(add).output(0);
        rewriter.replace({m, add}, makeNode("FusedMatMul", kOnnxlensDomain,
                                            matmul.name().empty() ? output : matmul.name(),
                                            {matmul.input(0), matmul.input(1), bias}, output));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(context.model());
    return rewrites;
}

int fuseMatMulGelu(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    Rewriter rewriter(graph);
    for (int m = 0; m < graph.node_size(); ++m) {
        const auto& matmul = graph.node(m);
        if (matmul.domain() != kOnnxlensDomain || matmul.op_type() != "FusedMatMul" ||
            findAttribute(matmul, "activation"))
            continue;
        const int g = index.soleConsumer(matmul.output(0));
        if (g < 0) continue;
        const auto& gelu = index.node(g);
        const bool isGelu =
            gelu.op_type() == "Gelu" && (gelu.domain() == kOnnxlensDomain || isDefaultDomain(gelu));
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
