#pragma once
// Tensors stored outside the .onnx file (data_location: EXTERNAL). Locations are confined to the
// model's folder: absolute paths, `..` and symlinks that leave the folder are refused.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "onnxlens/model/MappedFile.h"
#include "onnxlens/model/Result.h"

namespace onnxlens {

struct ExternalDataLocation {
    std::filesystem::path file;  // canonical path inside the model's folder
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // resolved: the whole rest of the file when not given
};

bool usesExternalData(const onnx::TensorProto& tensor);

// Resolves and checks a tensor's external location against `modelDirectory`.
Result<ExternalDataLocation> resolveExternalData(const onnx::TensorProto& tensor,
                                                 const std::filesystem::path& modelDirectory);

// Resolves every external tensor of the model (the loader's check): the first failure, prefixed
// with `name`.
Status checkExternalDataLocations(const onnx::ModelProto& model,
                                  const std::filesystem::path& modelDirectory,
                                  const std::string& name);

// An external tensor's bytes inside the read-only mapping of its file (MappedFile.h), which stays
// mapped while `mapping` is held. The length is checked against the tensor's dims and type.
struct MappedExternalData {
    std::shared_ptr<const MappedFile> mapping;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    const char* data() const { return mapping->data() + offset; }
};
Result<MappedExternalData> mapExternalData(const onnx::TensorProto& tensor,
                                           const std::filesystem::path& modelDirectory);

// Reads the bytes of an external tensor (memory-mapped, copied out; a file truncated meanwhile
// is an error).
Result<std::string> readExternalData(const onnx::TensorProto& tensor,
                                     const std::filesystem::path& modelDirectory);

// Replaces every external tensor of the model (initializers, Constant attributes, subgraphs)
// by its inline raw_data.
Status internalizeExternalData(onnx::ModelProto& model,
                               const std::filesystem::path& modelDirectory);

}  // namespace onnxlens
