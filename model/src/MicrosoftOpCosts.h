#pragma once
// The cost model's rules for ONNX Runtime's contrib operators (com.microsoft) and its
// default-domain extensions (MicrosoftOpSchemas.h), kept beside CostModel.cpp's own rules.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
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

}  // namespace onnxlens
