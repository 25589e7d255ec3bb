// The fused nodes ONNX Runtime saves at its `extended` level (SessionOptions'
// optimized_model_filepath), as the engine's own operators where one computes the same, so that
// the engine's fusions and layouts take them: com.microsoft FusedConv is com.onnxlens FusedConv
// (same inputs and attributes, ConvOps.cpp runs both), and a com.microsoft FusedMatMul that scales
// by 1 and transposes nothing is a MatMul. The other FusedMatMul nodes and FusedGemm run as they
// are (MatMulOps.cpp).
#include <algorithm>
#include <string>

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

}  // namespace

int adoptOrtFusedNodes(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    // The passes after this one infer shapes at most once, lazily: made after the rewrite,
    // inference would stop at the com.onnxlens nodes (onnx knows only the com.microsoft schemas),
    // and the residual Add after such a convolution would not fuse. Inferred now, on the graph as
    // ONNX Runtime saved it, they hold after it (the outputs keep their names and shapes).
    const bool adopts = std::any_of(graph.node().begin(), graph.node().end(), [](const auto& n) {
        return n.domain() == kMicrosoftDomain &&
               (n.op_type() == "FusedConv" || n.op_type() == "FusedMatMul");
    });
    if (!adopts) return 0;
    context.shapes();
    int convs = 0, products = 0;
    for (auto& node : *graph.mutable_node()) {
        if (node.domain() != kMicrosoftDomain) continue;
        if (node.op_type() == "FusedConv" && validActivation(node)) {
            node.set_domain(kOnnxlensDomain);
            ++convs;
        } else if (node.op_type() == "FusedMatMul" && isPlainProduct(node)) {
            node.set_domain("");
            node.set_op_type("MatMul");
            node.clear_attribute();
            ++products;
        }
    }
    if (convs) importOnnxlensDomain(context.model());
    return convs + products;
}

}  // namespace onnxlens::engine
