#pragma once
// Every optimizer pass, as the pass table (PassTable.cpp) runs it: one function of a
// PassContext returning how many rewrites it made. What each pass does is said in
// onnxlens/engine/GraphOptimizer.h, beside the wrapper that runs it alone.
#include <cstdint>

#include "optimizer/PassContext.h"

namespace onnxlens::engine {

// EliminationPasses.cpp
int eliminateIdentityNodes(PassContext& context);
int eliminateInferenceDropout(PassContext& context);
// ConstantFolding.cpp
int foldConstants(PassContext& context);
// ReshapeTargetsFromInputDims.cpp
int reshapeTargetsFromInputDims(PassContext& context);
// BatchNormFolding.cpp
int foldBatchNormIntoConv(PassContext& context);
// OrtFusedNodes.cpp: the fused nodes ONNX Runtime saves at its `extended` level, as the engine's
// own operators where one computes the same: com.microsoft FusedConv becomes com.onnxlens
// FusedConv (same inputs X, W, B, Z and attributes; one kernel runs both), so that the residual
// Add, the channel-blocked layout and the other convolution passes take it; com.microsoft
// FusedMatMul with alpha 1 and no transposes becomes MatMul (bias fusion, weight packing);
// MatMul (constant weights) + com.microsoft BiasGelu becomes FusedMatMul(bias, Gelu).
int adoptOrtFusedNodes(PassContext& context);
// ConvFusions.cpp
int fuseConvAdd(PassContext& context);
int fuseConvActivation(PassContext& context);
// ConvTransposeAsConv.cpp: ConvTranspose with kernel = strides (square, no pads, dilation 1,
// group 1, constant float weights) [+ BatchNormalization] [+ activation] -> 1x1 Conv to s*s*M
// channels (normalization folded in) [-> activation] -> DepthToSpace (DCR, blocksize s).
int convertConvTransposeToConv(PassContext& context);
// ChannelBlockedLayoutPass.cpp
int convertToChannelBlockedLayout(PassContext& context, std::int64_t block);
// TransformerFusions.cpp
int fuseGelu(PassContext& context);
int fuseSilu(PassContext& context);
int fuseLayerNormalization(PassContext& context);
int fuseMatMulBias(PassContext& context);
int fuseMatMulGelu(PassContext& context);
// QuantizedFusions.cpp
int fuseMatMulIntegerToFloat(PassContext& context);
// QuantizedConvFusions.cpp
int fuseConvIntegerToFloat(PassContext& context);
int fuseQdqConv(PassContext& context);
int fuseQdqMatMul(PassContext& context);
// A DequantizeLinear giving its int8 weights to a Conv or MatMul that fuseQdqConv or
// fuseQdqMatMul takes: constant folding keeps it, so that the fusion finds the int8 weights.
bool isFusedQdqWeight(const GraphIndex& index, const onnx::NodeProto& dq);
// MatMulWeightPacking.cpp: MatMul/FusedMatMul with constant float [K, N] weights (at least
// 64 x 64) -> com.onnxlens PackedMatMul(A, packed B [, bias]) with attributes k and n, the
// weights packed with `block` (8 or 16, else nothing changes) as ops/PackedMatMulWeights.h
// says; the plain weights are dropped when nothing else reads them.
int packMatMulWeights(PassContext& context, std::int64_t block);
// QLinearConvChannelsLast.cpp
int convertQLinearConvToChannelsLast(PassContext& context);
// Float16ComputeInFloat.cpp
int computeFloat16InFloat(PassContext& context);

}  // namespace onnxlens::engine
