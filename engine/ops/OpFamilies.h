#pragma once
// One register function per operator family (one source file each under engine/ops/).
// KernelRegistry::global() calls them all.
#include "onnxlens/engine/KernelRegistry.h"

namespace onnxlens::engine::ops {

#define ONNXLENS_OP_FAMILIES(X) \
    X(Elementwise)              \
    X(Activation)               \
    X(Cast)                     \
    X(Quantize)                 \
    X(ShapeManipulation)        \
    X(Indexing)                 \
    X(Reduce)                   \
    X(Normalization)            \
    X(MatMul)                   \
    X(Loss)                     \
    X(Training)                 \
    X(Text)                     \
    X(Conv)                     \
    X(Pool)                     \
    X(Resize)                   \
    X(ObjectDetection)          \
    X(Signal)                   \
    X(Recurrent)                \
    X(ControlFlow)              \
    X(Sequence)                 \
    X(Random)                   \
    X(Layout)                   \
    X(ImageBlock)               \
    X(Attention)                \
    X(ImageDecoder)             \
    X(MlLinear)                 \
    X(MlTree)                   \
    X(MlSvm)                    \
    X(MlPreprocess)             \
    X(MlEncoding)               \
    X(MsMatMulNBits)            \
    X(MsQuantizedMatMul)        \
    X(MsDynamicQuantizeLstm)    \
    X(MsAttention)              \
    X(MsGroupQueryAttention)    \
    X(MsRotaryEmbedding)        \
    X(MsNormalization)          \
    X(MsActivation)             \
    X(MsQLinear)                \
    X(MsQLinearPool)

#define ONNXLENS_DECLARE_FAMILY(F) void register##F##Ops(KernelRegistry& registry);
ONNXLENS_OP_FAMILIES(ONNXLENS_DECLARE_FAMILY)
#undef ONNXLENS_DECLARE_FAMILY

}  // namespace onnxlens::engine::ops
