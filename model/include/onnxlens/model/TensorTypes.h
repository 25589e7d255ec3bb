#pragma once
// Element types of onnx::TensorProto: numpy-style names and sizes, and the bytes a tensor holds.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "onnxlens/model/Result.h"

namespace onnxlens {

// numpy-style name of a TensorProto::DataType: "float32", "int64", "bool", "bfloat16", "string";
// "undefined" for 0 and "type<N>" for values this onnx version does not know.
std::string elementTypeName(std::int32_t elementType);

// The inverse of elementTypeName; nullopt for unknown names.
std::optional<std::int32_t> elementTypeFromName(const std::string& name);

// Bytes per element in raw_data; 0 for STRING and UNDEFINED/unknown types. The 4-bit types
// (uint4, int4, float4e2m1) pack two elements per byte: use rawDataSize() for byte counts.
std::size_t elementTypeSize(std::int32_t elementType);

// Bytes `count` elements take in raw_data (or external data): count * elementTypeSize, and
// ceil(count / 2) for the 4-bit types.
std::uint64_t rawDataSize(std::int32_t elementType, std::uint64_t count);
bool isFourBitElementType(std::int32_t elementType);  // uint4 (21), int4 (22), float4e2m1 (23)

// A TypeProto written the numpy way: "float32" for tensors, "sequence<float32>",
// "map<int64,float32>", "optional<...>", "sparse<float32>"; "undefined" when no type is set.
std::string typeName(const onnx::TypeProto& type);

// Product of the dims (1 for a scalar); nullopt on a negative dim or overflow.
std::optional<std::uint64_t> elementCount(const onnx::TensorProto& tensor);

// "2x3x4" (or "scalar") for messages.
std::string dimsText(const onnx::TensorProto& tensor);

// The tensor's elements as little-endian raw bytes, from raw_data or the typed fields
// (float_data, int32_data, ...); checks the element count against the dims. 4-bit types come
// packed as stored (two per byte, the first in the low nibble). Not for STRING
// tensors or external data. `where` prefixes error messages.
Result<std::string> tensorRawBytes(const onnx::TensorProto& tensor, const std::string& where);

// Checks that the stored data (raw_data, typed fields or string_data) agrees with dims and
// data_type; external tensors are not checked here (see ExternalData.h).
Status checkTensorDataSize(const onnx::TensorProto& tensor, const std::string& where);

}  // namespace onnxlens
