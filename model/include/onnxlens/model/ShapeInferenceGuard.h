#pragma once
// onnx 1.12's shape-inference functions trust their node: a Conv with strides 0 divides by zero,
// an LSTM whose input has rank 0 reads past its dims. Opening such a model would kill the
// process that infers its shapes (the window, the CLI). guardShapeInference() wraps the
// inference function of every registered schema once per process with checks of the attribute
// values and input ranks those functions assume; a node that fails them gets an ordinary
// shape-inference error naming the attribute or input, and inference goes on with the next node.
// Call it before any onnx::shape_inference::InferShapes (it is cheap after the first call).
#include <onnx/onnx_pb.h>

#include <string>

namespace onnxlens {

void guardShapeInference();

// The problem the guard finds in a node given its inputs' ranks (-1: unknown), "" when none.
// Exposed for tests and for the engine's own checks before it computes anything.
std::string hostileNodeProblem(const onnx::NodeProto& node, const std::vector<int>& inputRanks);

}  // namespace onnxlens
