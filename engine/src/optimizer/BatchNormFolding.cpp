// BatchNormalization after a Conv folds into the Conv's weights and bias.
#include <cmath>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

int foldBatchNormIntoConv(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    auto constantFloat = [&](const std::string& name) -> std::optional<Tensor> {
        if (!index.constantInitializer(name)) return std::nullopt;
        auto t = constantTensor(index, name, context.modelDirectory());
        if (!t || t->dtype() != DataType::Float) return std::nullopt;
        return t;
    };

    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int b = 0; b < graph.node_size(); ++b) {
        const auto& bn = graph.node(b);
        if (!isOnnxOp(bn, "BatchNormalization") || bn.input_size() != 5) continue;
        bool extraOutputs = false;
        for (int o = 1; o < bn.output_size(); ++o)
            extraOutputs = extraOutputs || !bn.output(o).empty();
        if (extraOutputs || intAttribute(bn, "training_mode", 0) != 0) continue;
        const int p = index.exclusiveProducer(bn.input(0));
        if (p < 0 || remove[static_cast<std::size_t>(p)]) continue;
        onnx::NodeProto& conv = *graph.mutable_node(p);
        if (!isOnnxOp(conv, "Conv") || conv.input_size() < 2) continue;
        auto w = constantFloat(conv.input(1));
        auto scale = constantFloat(bn.input(1)), bias = constantFloat(bn.input(2)),
             mean = constantFloat(bn.input(3)), var = constantFloat(bn.input(4));
        if (!w || !scale || !bias || !mean || !var || w->rank() < 3) continue;
        const std::int64_t channels = w->dim(0);
        if (scale->numel() != channels || bias->numel() != channels || mean->numel() != channels ||
            var->numel() != channels)
            continue;
        std::optional<Tensor> convBias;
        if (conv.input_size() >= 3 && !conv.input(2).empty()) {
            convBias = constantFloat(conv.input(2));
            if (!convBias || convBias->numel() != channels) continue;
        }
        float epsilon = 1e-5f;
        if (const auto* a = findAttribute(bn, "epsilon")) epsilon = a->f();

        Tensor newW = w->clone();
        Tensor newB(DataType::Float, {channels});
        const std::int64_t perChannel = w->numel() / std::max<std::int64_t>(channels, 1);
        float* wd = newW.data<float>();
        for (std::int64_t c = 0; c < channels; ++c) {
            const float factor =
                scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + epsilon);
            for (std::int64_t k = 0; k < perChannel; ++k) wd[c * perChannel + k] *= factor;
            const float b0 = convBias ? convBias->data<float>()[c] : 0.0f;
            newB.data<float>()[c] = (b0 - mean->data<float>()[c]) * factor + bias->data<float>()[c];
        }
        const std::string wName = conv.name() + "/" + conv.input(1) + "_bn_folded";
        const std::string bName = conv.name() + "/bias_bn_folded";
        *graph.add_initializer() = tensorToProto(newW, wName);
        *graph.add_initializer() = tensorToProto(newB, bName);
        conv.set_input(1, wName);
        if (conv.input_size() >= 3)
            conv.set_input(2, bName);
        else
            conv.add_input(bName);
        conv.set_output(0, bn.output(0));
        remove[static_cast<std::size_t>(b)] = true;
        ++rewrites;
    }
    if (rewrites) removeNodes(graph, remove);
    return rewrites;
}

}  // namespace onnxlens::engine
