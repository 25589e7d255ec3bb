#pragma once
// Conversions between engine values and the ONNX protobuf messages (TensorProto, SequenceProto,
// OptionalProto): initializers, Constant attributes, test data files.
#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>  // defines ONNX_API, which onnx-data.pb.h needs: include it first

#include <onnx/onnx-data.pb.h>

#include "onnxlens/engine/Value.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

// `modelDirectory` resolves external data; empty means external data is an error.
// Throws EngineError (with the tensor's name) on malformed data.
Tensor tensorFromProto(const onnx::TensorProto& proto,
                       const std::filesystem::path& modelDirectory = {});
onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name = {});

Value valueFromSequenceProto(const onnx::SequenceProto& proto);
Value valueFromOptionalProto(const onnx::OptionalProto& proto);

// Reads a .pb (TensorProto, or SequenceProto/OptionalProto when `expectedType` says so) or .npy
// file as a Value. Errors name the file.
Result<Value> readValueFile(const std::filesystem::path& file,
                            const onnx::TypeProto* expectedType = nullptr);

DataType dataTypeOfTypeProto(const onnx::TypeProto& type);  // tensor elem type, Undefined if none

}  // namespace onnxlens::engine
