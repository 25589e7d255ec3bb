#pragma once
// Conversions between engine values and the ONNX protobuf messages (TensorProto, SequenceProto,
// OptionalProto): initializers, Constant attributes, test data files.
// onnx_pb.h defines ONNX_API, which onnx-data.pb.h needs, so it comes first.
// clang-format off
#include <onnx/onnx_pb.h>
#include <onnx/onnx-data.pb.h>
// clang-format on

#include <filesystem>
#include <memory>
#include <string>

#include "onnxlens/engine/Value.h"
#include "onnxlens/model/MappedFile.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

// Where a tensor made by tensorFromProto keeps its bytes.
struct TensorSource {
    // The external data file's mapping, when the tensor's bytes came from one.
    std::shared_ptr<const MappedFile> mapping;
    // True when the tensor views the mapping in place (offset 64-byte aligned); false when its
    // bytes were copied (inline data, or an external tensor at an unaligned offset).
    bool inPlace = false;
};

// `modelDirectory` resolves external data; empty means external data is an error. External
// tensors at 64-byte aligned offsets view their file's read-only mapping (MappedFile.h) instead
// of being read: pages come in as kernels touch them. `source` (optional) says which.
// Throws EngineError (with the tensor's name) on malformed data.
Tensor tensorFromProto(const onnx::TensorProto& proto,
                       const std::filesystem::path& modelDirectory = {},
                       TensorSource* source = nullptr);
onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name = {});

Value valueFromSequenceProto(const onnx::SequenceProto& proto);
Value valueFromOptionalProto(const onnx::OptionalProto& proto);
// A map's values are stored as a SequenceProto of one-element tensors (numpy_helper.from_dict).
Value valueFromMapProto(const onnx::MapProto& proto);
onnx::MapProto mapToProto(const Value& map, const std::string& name = {});
// Sequences of tensors (elem_type TENSOR) and of maps (elem_type MAP).
onnx::SequenceProto sequenceToProto(const Value& sequence, const std::string& name = {});

// An OptionalProto holding the value (empty for None), as test data stores optional outputs.
onnx::OptionalProto optionalToProto(const Value& value, const std::string& name = {});

// Writes any value as the ONNX message its kind is stored as in test data: TensorProto,
// SequenceProto, MapProto, or an empty OptionalProto; an OptionalProto holding the value when
// `declaredType` (the graph output's type) is an optional. Errors name the file.
Status writeValuePbFile(const std::filesystem::path& file, const Value& value,
                        const std::string& name, const onnx::TypeProto* declaredType = nullptr);

// Reads a .pb (TensorProto, or SequenceProto/MapProto/OptionalProto when `expectedType` says so) or
// .npy file as a Value. Errors name the file.
Result<Value> readValueFile(const std::filesystem::path& file,
                            const onnx::TypeProto* expectedType = nullptr);

DataType dataTypeOfTypeProto(const onnx::TypeProto& type);  // tensor elem type, Undefined if none

}  // namespace onnxlens::engine
