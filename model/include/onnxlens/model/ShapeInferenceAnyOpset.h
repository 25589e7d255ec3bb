#pragma once
// Shape inference for models of any opset: onnx's inference where the linked library knows the
// nodes, and onnxlens's own shape rules (ShapeRules.h) for the nodes of newer opsets it does not
// know, so that an opset-21 model gets shapes on every edge the rules can reach.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace onnxlens {

struct ShapeInferenceOutcome {
    bool ok = false;       // onnx's strict inference finished without an error
    std::string message;   // the first error (or why inference was skipped) when not ok
    bool skipped = false;  // a node breaks its schema: nothing was inferred
    std::int64_t valuesShapedByOnnxlens = 0;  // node outputs whose type came from ShapeRules
    // Node outputs whose dims SymbolicShapePropagation filled (or completed).
    std::int64_t valuesShapedBySymbolicPropagation = 0;
};

// Infers the value_info of `model` (a copy without bulk data: copyWithoutBulkData) in place:
// graph, subgraphs and graph outputs. Node protos, opset imports and IR version are left as
// they were. Runs checkNodesAgainstSchemas first (on the nodes the library will see) and skips
// inference when it fails, as onnx's inference functions crash on nodes breaking their schema.
ShapeInferenceOutcome inferShapesAnyOpset(onnx::ModelProto& model);

}  // namespace onnxlens
