#pragma once
// Writing files so that a failure never leaves a half-written one behind: the bytes go to a
// temporary file in the target folder, which is renamed over the target only once complete.
// Models too large for one protobuf (2 GB) keep their weights in an external data file beside
// the model (location relative to the model, as the ONNX external data convention says).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "onnxlens/model/Result.h"

namespace onnxlens {

// Writes `bytes` to `file` through a temporary file in the same folder. Errors name the file.
Status writeFileAtomically(const std::filesystem::path& file, const std::string& bytes);

struct ModelWriteOptions {
    // When the serialized model would be larger than this, tensors of at least
    // `externalTensorMinBytes` move to "<model file name>.data". The default stays below
    // protobuf's 2 GB limit with room for the graph itself.
    std::uint64_t externalDataThreshold = (std::uint64_t{2} << 30) - (std::uint64_t{64} << 20);
    bool forceExternalData = false;  // e.g. when the source model used external data
    std::uint64_t externalTensorMinBytes = 1024;
};

struct WrittenModel {
    std::filesystem::path file;
    std::filesystem::path externalDataFile;  // empty when every tensor is inline
    std::uint64_t modelBytes = 0;            // the .onnx file
    std::uint64_t externalBytes = 0;         // the .data file
    std::uint64_t totalBytes() const { return modelBytes + externalBytes; }
};

// Writes `model` (all tensor data inline, as loaded and internalized) to `file`. Moves large
// tensors' raw_data out of `model` into the external file when the options ask for it, so the
// model afterwards refers to that file. Both files are written atomically, the data file first.
Result<WrittenModel> writeModelFile(onnx::ModelProto& model, const std::filesystem::path& file,
                                    const ModelWriteOptions& options = {});

// The model file plus every external data file it refers to (each counted once).
std::uint64_t modelBytesOnDisk(const onnx::ModelProto& model, const std::filesystem::path& file,
                               const std::filesystem::path& modelDirectory);

}  // namespace onnxlens
