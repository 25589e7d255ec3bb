// Nodes that pass their input through unchanged at inference time: their readers read the input.
#include <functional>

#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

int eliminatePassThrough(PassContext& context,
                         const std::function<bool(const onnx::NodeProto&)>& isPassThrough) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        if (!isPassThrough(node) || node.input_size() < 1 || node.input(0).empty()) continue;
        const std::string out = node.output(0);
        if (index.isGraphOutput(out)) continue;  // keep graph output names intact
        const std::string in = node.input(0);
        remove[static_cast<std::size_t>(i)] = true;
        renameUses(graph, out, in);
        ++rewrites;
    }
    if (rewrites) removeNodes(graph, remove);
    return rewrites;
}

}  // namespace

int eliminateIdentityNodes(PassContext& context) {
    return eliminatePassThrough(context, [](const onnx::NodeProto& n) {
        return isOnnxOp(n, "Identity") && n.output_size() == 1;
    });
}

int eliminateInferenceDropout(PassContext& context) {
    const int opsetVersion = context.defaultOpset();
    return eliminatePassThrough(context, [opsetVersion](const onnx::NodeProto& n) {
        if (!isOnnxOp(n, "Dropout")) return false;
        if (n.output_size() > 1 && !n.output(1).empty()) return false;  // mask is used
        if (opsetVersion >= 12 && n.input_size() >= 3 && !n.input(2).empty())
            return false;  // training_mode given
        for (const auto& a : n.attribute())
            if (a.name() == "is_test" && a.i() == 0 && opsetVersion < 7) return false;
        return true;
    });
}

}  // namespace onnxlens::engine
