// The fused nodes ONNX Runtime saves at its `extended` level (SessionOptions'
// optimized_model_filepath), as the engine's own operators where one computes the same, so that
// the engine's fusions and layouts take them: com.microsoft FusedConv is com.onnxlens FusedConv
// (same inputs and attributes, ConvOps.cpp runs both), a com.microsoft FusedMatMul that scales
// by 1 and transposes nothing is a MatMul, and a MatMul with constant weights followed by a
// BiasGelu is a com.onnxlens FusedMatMul with bias and Gelu. The other FusedMatMul nodes and
// FusedGemm run as they are (MatMulOps.cpp; pack-matmul-weights packs a FusedMatMul's constant
// weights).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

constexpr const char* kMicrosoftDomain = "com.microsoft";

bool isPlainProduct(const onnx::NodeProto& node) {
    for (const auto& a : node.attribute()) {
        if (a.name() == "alpha") {
            if (a.type() != onnx::AttributeProto::FLOAT || a.f() != 1.0f) return false;
        } else if (a.name() == "transA" || a.name() == "transB" || a.name() == "transBatchA" ||
                   a.name() == "transBatchB") {
            if (a.type() != onnx::AttributeProto::INT || a.i() != 0) return false;
        } else {
            return false;  // an attribute the product does not know: leave it to the kernel
        }
    }
    return node.input_size() == 2 && node.output_size() == 1;
}

// Whether the FusedConv's activation is one the kernel takes with its parameter count; the
// others stay ONNX Runtime's node, so that the kernel's error names the node as the file has it.
bool validActivation(const onnx::NodeProto& node) {
    std::string name;
    int params = 0;
    for (const auto& a : node.attribute()) {
        if (a.name() == "activation") name = a.s();
        if (a.name() == "activation_params") params = a.floats_size();
    }
    if (name.empty() || name == "Relu" || name == "Tanh" || name == "Sigmoid" ||
        name == "HardSwish")
        return true;
    if (name == "LeakyRelu") return params == 1;
    return (name == "Clip" || name == "HardSigmoid") && params == 2;
}

// BiasGelu(MatMul(A, W), bias) with constant float W [K, N] and bias [N], the MatMul read by
// nothing else: what ONNX Runtime leaves of a BERT feed-forward's first product. The engine's
// FusedMatMul(A, W, bias) with activation Gelu computes it in one product (BiasGelu is the exact
// erf GELU of the sum), and weight packing then takes it.
std::optional<onnx::NodeProto> asFusedMatMulGelu(const GraphIndex& index,
                                                 const onnx::GraphProto& graph,
                                                 const onnx::NodeProto& biasGelu) {
    if (biasGelu.input_size() != 2 || biasGelu.output_size() != 1) return std::nullopt;
    const int p = index.exclusiveProducer(biasGelu.input(0));
    if (p < 0) return std::nullopt;
    const onnx::NodeProto& matmul = graph.node(p);
    if (!isOnnxOp(matmul, "MatMul") || matmul.input_size() != 2 || matmul.output_size() != 1)
        return std::nullopt;
    const auto w = initializerDims(index, matmul.input(1));
    const auto bias = initializerDims(index, biasGelu.input(1));
    if (!w || !bias || w->size() != 2 || bias->size() != 1 || (*w)[1] != (*bias)[0] ||
        initializerType(index, matmul.input(1)) != onnx::TensorProto::FLOAT ||
        initializerType(index, biasGelu.input(1)) != onnx::TensorProto::FLOAT)
        return std::nullopt;
    onnx::NodeProto fused = makeNode(
        "FusedMatMul", kOnnxlensDomain, matmul.name().empty() ? biasGelu.name() : matmul.name(),
        {matmul.input(0), matmul.input(1), biasGelu.input(1)}, biasGelu.output(0));
    setStringAttribute(fused, "activation", "Gelu");
    return fused;
}

}  // namespace

int adoptOrtFusedNodes(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    // The passes after this one infer shapes at most once, lazily: made after the rewrite,
    // inference would stop at the com.onnxlens nodes (onnx knows only the com.microsoft schemas),
    // and the residual Add after such a convolution would not fuse. Inferred now, on the graph as
    // ONNX Runtime saved it, they hold after it (the outputs keep their names and shapes).
    const bool adopts = std::any_of(graph.node().begin(), graph.node().end(), [](const auto& n) {
        return n.domain() == kMicrosoftDomain &&
               (n.op_type() == "FusedConv" || n.op_type() == "FusedMatMul" ||
                n.op_type() == "BiasGelu");
    });
    if (!adopts) return 0;
    context.shapes();
    const GraphIndex& index = context.index();
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        onnx::NodeProto& node = *graph.mutable_node(i);
        if (node.domain() != kMicrosoftDomain) continue;
        if (node.op_type() == "FusedConv" && validActivation(node)) {
            node.set_domain(kOnnxlensDomain);
            ++rewrites;
        } else if (node.op_type() == "FusedMatMul" && isPlainProduct(node)) {
            node.set_domain("");
            node.set_op_type("MatMul");
            node.clear_attribute();
            ++rewrites;
        } else if (node.op_type() == "BiasGelu") {
            if (auto fused = asFusedMatMulGelu(index, graph, node)) {
                // The fused node takes the BiasGelu's place: its inputs are computed by then.
                remove[static_cast<std::size_t>(index.exclusiveProducer(node.input(0)))] = true;
                node = std::move(*fused);
                ++rewrites;
            }
        }
    }
    if (rewrites == 0) return 0;
    removeNodes(graph, remove);
    importOnnxlensDomain(context.model());
    return rewrites;
}

}  // namespace onnxlens::engine
