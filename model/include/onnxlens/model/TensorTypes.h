#pragma once
// Element types of onnx::TensorProto: numpy-style names and sizes, and the bytes a tensor holds.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
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

// Calls `visit(element)` for each element of a small numeric tensor (shape values, axes,
// scalars), in the element's own C++ type: int64_t, int32_t, uint8_t (bool, uint8), int8_t,
// float or double. False, with nothing visited, for other types, more than `maxElements`
// elements or unreadable data.
template <class Visit>
bool visitSmallTensor(const onnx::TensorProto& tensor, std::uint64_t maxElements, Visit&& visit) {
    const auto count = elementCount(tensor);
    if (!count || *count > maxElements) return false;
    auto bytes = tensorRawBytes(tensor, tensor.name());
    if (!bytes) return false;
    auto each = [&](auto sample) {
        using T = decltype(sample);
        if (bytes->size() != *count * sizeof(T)) return false;
        for (std::uint64_t i = 0; i < *count; ++i) {
            T value;
            std::memcpy(&value, bytes->data() + i * sizeof(T), sizeof(T));
            visit(value);
        }
        return true;
    };
    switch (tensor.data_type()) {
        case onnx::TensorProto::INT64:
            return each(std::int64_t{});
        case onnx::TensorProto::INT32:
            return each(std::int32_t{});
        case onnx::TensorProto::BOOL:
        case onnx::TensorProto::UINT8:
            return each(std::uint8_t{});
        case onnx::TensorProto::INT8:
            return each(std::int8_t{});
        case onnx::TensorProto::FLOAT:
            return each(float{});
        case onnx::TensorProto::DOUBLE:
            return each(double{});
        default:
            return false;
    }
}

// Checks that the stored data (raw_data, typed fields or string_data) agrees with dims and
// data_type; external tensors are not checked here (see ExternalData.h).
Status checkTensorDataSize(const onnx::TensorProto& tensor, const std::string& where);

}  // namespace onnxlens
