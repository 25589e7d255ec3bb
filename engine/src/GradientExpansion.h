#pragma once
// ai.onnx.preview.training::Gradient, expanded at compile time into explicit backward nodes
// (reverse-mode differentiation of the forward nodes between `xs` and `y`).
#include <onnx/onnx_pb.h>

namespace onnxlens::engine {

bool hasGradientNodes(const onnx::GraphProto& graph);

// A copy of `graph` whose Gradient nodes are replaced by the nodes computing them. Supports the
// elementwise ops Add, Sub, Mul, Div, Neg, Identity on operands of equal shape; other forward
// ops are an EngineError naming them.
onnx::GraphProto expandGradientNodes(const onnx::GraphProto& graph);

}  // namespace onnxlens::engine
