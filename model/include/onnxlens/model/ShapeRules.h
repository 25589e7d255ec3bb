#pragma once
// onnxlens's own shape rules for the operator versions of opsets 18 to 24 that the linked onnx
// library (1.12: opsets up to 17) does not know. Each rule computes a node's output types
// (element type and shape, symbolic dims passed through where they pass unchanged) from its
// input types, its attributes and the values of small constant inputs (axes, pads, sizes...).
#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace onnxlens {

struct ShapeRuleInputs {
    // Input types in node order; null when unknown or the input is absent.
    std::vector<const onnx::TypeProto*> types;
    // The int64/int32/float values of an input when it is a constant (initializer or Constant
    // node) small enough to read; nullopt otherwise.
    std::function<std::optional<std::vector<double>>(int input)> constantValues;
};

// The output types of `node` (ai.onnx, at `opsetVersion`); an empty vector when there is no rule
// for the operator or the inputs do not determine them. Entries may be left without a type
// (value_case unset) for outputs that cannot be determined.
std::vector<onnx::TypeProto> inferWithShapeRules(const onnx::NodeProto& node, int opsetVersion,
                                                 const ShapeRuleInputs& inputs);

// Whether a rule exists for the operator (whatever its inputs).
bool hasShapeRule(const std::string& opType);

}  // namespace onnxlens
