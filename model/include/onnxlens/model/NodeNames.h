#pragma once
// How an operator is named where a name must identify it: the engine's per-node profile, the
// heat overlay that colours the graph by that profile, exported traces. Exporters often leave
// nodes unnamed (older PyTorch, hand-built graphs), so the name falls back to something unique.
#include <onnx/onnx_pb.h>

#include <string>

namespace onnxlens {

// The node's own name; for an unnamed node "OpType(first output)", e.g. "Relu(relu_out)",
// unique within a graph because every value has one producer. A node without outputs keeps
// its op type.
std::string profileNameOf(const onnx::NodeProto& node);

}  // namespace onnxlens
