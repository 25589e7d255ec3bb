#pragma once
// The cost model's rules for ONNX Runtime's contrib operators (com.microsoft) and its
// default-domain extensions (MicrosoftOpSchemas.h), kept beside CostModel.cpp's own rules.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/model/CostModel.h"

namespace onnxlens {

// A value's dims as the cost model knows them (-1: unknown dim; nullopt: unknown rank).
using CostDimsOf =
    std::function<std::optional<std::vector<std::int64_t>>(const std::string& value)>;

// Fills cost.figures (macs, flops) for the operators it knows and returns true; false for any
// other node. Bytes and parameters are counted by the caller at their stored types (so
// MatMulNBits' packed weights count bits / 8 bytes per weight, plus scales and zero points).
bool countMicrosoftOpCost(const onnx::NodeProto& node, const CostDimsOf& dimsOf, NodeCost& cost);

// Weights stored several to a byte: com.microsoft MatMulNBits's B (input 1: N x K weights of
// `bits` bits, each block's bytes padded) and GatherBlockQuantized's uint8 data (input 0: values
// of `bits` bits, 4 by default, two or more to a byte). A parameter count of such a tensor counts
// weights, not the bytes that hold them.
struct PackedWeights {
    std::uint64_t weights = 0;
    int bits = 0;
};
// For input `input` of `node`, a uint8 tensor of `storedElements` elements: the weights it holds,
// or nullopt when that input is not packed (another operator, another input, attributes that
// make no sense).
std::optional<PackedWeights> packedWeightsOfInput(const onnx::NodeProto& node, int input,
                                                  std::uint64_t storedElements);
// Every packed weight that the nodes of `graph` read, by value name; `elementsOf` gives a value's
// element count when it is stored as uint8, nullopt otherwise (other types, unknown shapes).
std::map<std::string, PackedWeights> packedWeightsOf(
    const onnx::GraphProto& graph,
    const std::function<std::optional<std::uint64_t>(const std::string&)>& elementsOf);
// The name parametersByType and the panels give packed weights: "4-bit packed".
std::string packedWeightsTypeName(int bits);

}  // namespace onnxlens
