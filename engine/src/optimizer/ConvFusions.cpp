// Convolution fusions: the residual Add and the activation after a Conv run inside one
// com.onnxlens FusedConv (ConvOps.cpp), as oneDNN post-ops where it can.
#include <limits>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

bool isConvToFuse(const onnx::NodeProto& node) {
    if (isOnnxOp(node, "Conv")) return node.output_size() == 1;
    return node.domain() == kOnnxlensDomain && node.op_type() == "FusedConv";
}

// The node as a FusedConv (a Conv's attributes carry over unchanged), with B and Z slots.
onnx::NodeProto asFusedConv(const onnx::NodeProto& conv) {
    onnx::NodeProto fused = conv;
    fused.set_domain(kOnnxlensDomain);
    fused.set_op_type("FusedConv");
    while (fused.input_size() < 3) fused.add_input("");
    return fused;
}

// A scalar constant initializer's value (Clip's min/max inputs).
std::optional<float> scalarInitializer(const GraphIndex& index, const std::string& name) {
    if (!index.constantInitializer(name)) return std::nullopt;
    auto t = constantTensor(index, name);
    if (!t || t->numel() != 1) return std::nullopt;
    return static_cast<float>(t->valueAsDouble(0));
}

// The activation attributes for a FusedConv replacing `act`, or nothing when `act` is not an
// activation the fused kernels apply.
std::optional<std::pair<std::string, std::vector<float>>> fusableActivation(
    const GraphIndex& index, const onnx::NodeProto& act, int opsetVersion) {
    if (act.output_size() != 1 || act.input_size() < 1) return std::nullopt;
    const std::string& op = act.op_type();
    auto floatAttribute = [&](const char* name, float fallback) {
        const auto* a = findAttribute(act, name);
        return a ? a->f() : fallback;
    };
    // x * sigmoid(alpha x): pass fuse-silu's com.onnxlens QuickGelu (alpha 1), or ONNX Runtime's.
    if (op == "QuickGelu" && act.input_size() == 1 &&
        (act.domain() == kOnnxlensDomain || act.domain() == "com.microsoft"))
        return std::make_pair(std::string("Swish"),
                              std::vector<float>{floatAttribute("alpha", 1.702f)});
    if (!isDefaultDomain(act)) return std::nullopt;
    if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish")
        return std::make_pair(op, std::vector<float>{});
    if (op == "HardSigmoid")
        return std::make_pair(
            op, std::vector<float>{floatAttribute("alpha", 0.2f), floatAttribute("beta", 0.5f)});
    if (op == "LeakyRelu")
        return std::make_pair(op, std::vector<float>{floatAttribute("alpha", 0.01f)});
    if (op == "Clip") {
        float lo = -std::numeric_limits<float>::infinity(),
              hi = std::numeric_limits<float>::infinity();
        if (opsetVersion < 11) {
            lo = floatAttribute("min", lo);
            hi = floatAttribute("max", hi);
        } else {
            for (int i = 1; i <= 2 && i < act.input_size(); ++i) {
                if (act.input(i).empty()) continue;
                auto v = scalarInitializer(index, act.input(i));
                if (!v) return std::nullopt;
                (i == 1 ? lo : hi) = *v;
            }
        }
        return std::make_pair(op, std::vector<float>{lo, hi});
    }
    return std::nullopt;
}

}  // namespace

int fuseConvAdd(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    auto candidate = [&](const onnx::NodeProto& add) {
        if (!isOnnxOp(add, "Add") || add.input_size() != 2) return false;
        for (const auto& in : add.input())
            if (int c = index.exclusiveProducer(in); c >= 0 && isConvToFuse(graph.node(c)))
                return true;
        return false;
    };
    // Shapes of the graph as the pass found it (inferred only when some Add may fuse), read
    // before the first rewrite.
    const InferredShapes* shapes = nullptr;
    for (const auto& node : graph.node())
        if (candidate(node)) {
            shapes = &context.shapes();
            break;
        }
    if (!shapes) return 0;
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int a = 0; a < graph.node_size(); ++a) {
        const onnx::NodeProto& add = graph.node(a);
        if (!candidate(add)) continue;
        for (int side = 0; side < 2; ++side) {
            const std::string& convOut = add.input(side);
            const std::string& z = add.input(1 - side);
            const int c = index.exclusiveProducer(convOut);
            if (c < 0 || convOut == z || remove[static_cast<std::size_t>(c)]) continue;
            const onnx::NodeProto& conv = graph.node(c);
            if (!isConvToFuse(conv) || findAttribute(conv, "activation")) continue;
            if (conv.input_size() > 3 && !conv.input(3).empty()) continue;
            // Z must not need broadcasting: Z, the Conv output and the sum have one shape.
            auto zs = shapes->dimsOf(z), cs = shapes->dimsOf(convOut),
                 ys = shapes->dimsOf(add.output(0));
            if (!zs || !cs || !ys || *zs != *cs || *cs != *ys) continue;
            onnx::NodeProto fused = asFusedConv(conv);
            while (fused.input_size() < 4) fused.add_input("");
            fused.set_input(3, z);
            fused.set_output(0, add.output(0));
            fused.set_name(conv.name().empty() ? add.name() : conv.name());
            // The fused node takes the Add's place: everything it reads is computed by then.
            *graph.mutable_node(a) = std::move(fused);
            remove[static_cast<std::size_t>(c)] = true;
            ++rewrites;
            break;
        }
    }
    if (rewrites) {
        removeNodes(graph, remove);
        importOnnxlensDomain(context.model());
    }
    return rewrites;
}

int fuseConvActivation(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    const int opset = context.defaultOpset();
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int a = 0; a < graph.node_size(); ++a) {
        const onnx::NodeProto& act = graph.node(a);
        if (act.input_size() < 1) continue;
        const int c = index.exclusiveProducer(act.input(0));
        if (c < 0 || remove[static_cast<std::size_t>(c)]) continue;
        const onnx::NodeProto& conv = graph.node(c);
        if (!isConvToFuse(conv) || findAttribute(conv, "activation")) continue;
        auto activation = fusableActivation(index, act, opset);
        if (!activation) continue;
        onnx::NodeProto fused = asFusedConv(conv);
        fused.set_output(0, act.output(0));
        setStringAttribute(fused, "activation", activation->first);
        if (!activation->second.empty()) {
            auto* params = fused.add_attribute();
            params->set_name("activation_params");
            params->set_type(onnx::AttributeProto::FLOATS);
            for (float v : activation->second) params->add_floats(v);
        }
        *graph.mutable_node(a) = std::move(fused);
        remove[static_cast<std::size_t>(c)] = true;
        ++rewrites;
    }
    if (rewrites) {
        removeNodes(graph, remove);
        importOnnxlensDomain(context.model());
    }
    return rewrites;
}

}  // namespace onnxlens::engine
