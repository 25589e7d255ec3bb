#pragma once
// Tensor files: serialized onnx::TensorProto (.pb, the ONNX test-data format) and numpy .npy.
// A file whose data size disagrees with its header or dims is an error naming the file.
#include <onnx/onnx_pb.h>

#include <filesystem>

#include "onnxlens/model/Result.h"

namespace onnxlens {

// By extension: .pb is a TensorProto, .npy a numpy array.
Result<onnx::TensorProto> readTensorFile(const std::filesystem::path& file);
Result<onnx::TensorProto> readTensorPbFile(const std::filesystem::path& file);
// All numeric dtypes, bool, float16, byte strings ('S'); little or big endian; C or Fortran
// order. The result is unnamed and holds raw_data in C order (string_data for strings).
Result<onnx::TensorProto> readNpyFile(const std::filesystem::path& file);

Status writeTensorPbFile(const std::filesystem::path& file, const onnx::TensorProto& tensor);
// From raw_data or the typed fields; format 1.0, little-endian, C order. bfloat16 has no numpy
// dtype and is refused.
Status writeNpyFile(const std::filesystem::path& file, const onnx::TensorProto& tensor);

}  // namespace onnxlens
