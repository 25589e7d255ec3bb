#include "optimizer/PassTable.h"

#include "onnxlens/engine/GraphOptimizer.h"
#include "optimizer/Passes.h"

namespace onnxlens::engine {

namespace {

int convertToPreferredChannelBlocks(PassContext& context) {
    return convertToChannelBlockedLayout(context, preferredChannelBlock());
}

// The weights take the block of the machine's convolution kernels (none without oneDNN).
int packPreferredMatMulWeights(PassContext& context) {
    return packMatMulWeights(context, preferredChannelBlock());
}

}  // namespace

const std::vector<OptimizerPass>& optimizerPassTable() {
    using S = PassStage;
    static const std::vector<OptimizerPass> table = {
        // A float16 model computes in float32: weights converted once, Casts at its borders
        // (types change: shapes are inferred again after it).
        {"compute-float16-in-float", computeFloat16InFloat, S::Cleanup, kNoFlags},
        {"eliminate-identity", eliminateIdentityNodes, S::Cleanup, kKeepsShapes},
        {"eliminate-inference-dropout", eliminateInferenceDropout, S::Cleanup, kKeepsShapes},
        // Folding makes shapes inferable that were not (Reshape targets become constants).
        {"fold-constants", foldConstants, S::Cleanup, kNeedsShapes},
        // What folding leaves of dynamic Reshape targets: the entries that copy the reshaped
        // value's own dims become 0, the target a constant (Reshape outputs are then inferred).
        {"reshape-targets-from-input-dims", reshapeTargetsFromInputDims, S::Cleanup, kNoFlags},
        {"fold-batchnorm-into-conv", foldBatchNormIntoConv, S::Cleanup, kKeepsShapes},
        // Fusions write com.onnxlens nodes, which onnx shape inference does not know: after the
        // cleanup rounds.
        // Quantized convolutions (QDQ pairs around Conv, DynamicQuantizeLinear -> ConvInteger ->
        // Cast -> Mul [-> Add] [-> Relu]) as one int8 convolution with a float epilogue
        // (com.onnxlens
        // ConvIntegerToFloat), before the float Conv fusions take the Conv and its Relu.
        {"fuse-qdq-conv", fuseQdqConv, S::Fusion, kKeepsShapes},
        {"fuse-qdq-matmul", fuseQdqMatMul, S::Fusion, kKeepsShapes},
        {"fuse-conv-integer-to-float", fuseConvIntegerToFloat, S::Fusion, kKeepsShapes},
        // Chains of QLinearConv (ONNX Runtime's QOperator format) keep their activations
        // channels-last, oneDNN's int8 layout, between layers.
        {"qlinearconv-channels-last", convertQLinearConvToChannelsLast, S::Fusion,
         kNeedsShapes | kKeepsShapes},
        // Before the conv fusions, which then take the activation after its 1x1 Conv.
        {"convtranspose-as-conv", convertConvTransposeToConv, S::Fusion, kKeepsShapes},
        // ONNX Runtime's saved FusedConv/FusedMatMul as the engine's own, before the fusions.
        {"adopt-ort-fused-nodes", adoptOrtFusedNodes, S::Fusion, kKeepsShapes},
        // x * Sigmoid(x) as one QuickGelu, before the conv fusions take it as a Swish epilogue.
        {"fuse-silu", fuseSilu, S::Fusion, kKeepsShapes},
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
        // DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (+ bias, + Gelu) as one int8
        // product with a float epilogue (com.onnxlens MatMulIntegerToFloat).
        {"fuse-matmul-integer-to-float", fuseMatMulIntegerToFloat, S::Fusion, kKeepsShapes},
        // Last: the float products that remain (FusedMatMul with its bias and Gelu) get their
        // weights packed once for oneDNN's kernels.
        {"pack-matmul-weights", packPreferredMatMulWeights, S::Fusion, kKeepsShapes},
    };
    return table;
}

}  // namespace onnxlens::engine
