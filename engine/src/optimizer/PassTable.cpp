#include "optimizer/PassTable.h"

#include "onnxlens/engine/GraphOptimizer.h"
#include "optimizer/Passes.h"

namespace onnxlens::engine {

namespace {

int convertToPreferredChannelBlocks(PassContext& context) {
    return convertToChannelBlockedLayout(context, preferredChannelBlock());
}

}  // namespace

const std::vector<OptimizerPass>& optimizerPassTable() {
    using S = PassStage;
    static const std::vector<OptimizerPass> table = {
        {"eliminate-identity", eliminateIdentityNodes, S::Cleanup, kKeepsShapes},
        {"eliminate-inference-dropout", eliminateInferenceDropout, S::Cleanup, kKeepsShapes},
        // Folding makes shapes inferable that were not (Reshape targets become constants).
        {"fold-constants", foldConstants, S::Cleanup, kNeedsShapes},
        {"fold-batchnorm-into-conv", foldBatchNormIntoConv, S::Cleanup, kKeepsShapes},
        // Fusions write com.onnxlens nodes, which onnx shape inference does not know: after the
        // cleanup rounds.
        {"fuse-conv-add", fuseConvAdd, S::Fusion, kNeedsShapes | kKeepsShapes},
        {"fuse-conv-activation", fuseConvActivation, S::Fusion, kKeepsShapes},
        // It rewrites the fused convolutions into their blocked forms.
        {"channel-blocked-layout", convertToPreferredChannelBlocks, S::Fusion, kKeepsShapes},
        // GELU and LayerNorm before MatMul + bias, so that the FusedMatMul they follow fuses
        // with the Gelu.
        {"fuse-gelu", fuseGelu, S::Fusion, kKeepsShapes},
        {"fuse-layer-normalization", fuseLayerNormalization, S::Fusion, kKeepsShapes},
        {"fuse-matmul-bias", fuseMatMulBias, S::Fusion, kKeepsShapes},
        {"fuse-matmul-gelu", fuseMatMulGelu, S::Fusion, kKeepsShapes},
    };
    return table;
}

}  // namespace onnxlens::engine
