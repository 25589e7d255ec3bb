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

// The default threshold: below protobuf's 2 GB limit with room for the graph itself. Tests lower
// it with the environment variable ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD (bytes), to exercise the
// external path on small models through the command line.
std::uint64_t defaultExternalDataThreshold();

struct ModelWriteOptions {
    // When the model would be larger than this (its tensors, inline and external, and the graph),
    // tensors of at least `externalTensorMinBytes` go to "<model file name>.data".
    std::uint64_t externalDataThreshold = defaultExternalDataThreshold();
    bool forceExternalData = false;  // e.g. when the source model used external data
    std::uint64_t externalTensorMinBytes = 1024;
    // Resolves tensors of `model` that are still external (a model loaded without internalizing):
    // their bytes are copied from the read-only mapping of their file (MappedFile.h) straight into
    // the new data file, never held in memory. Empty: every tensor must be inline.
    std::filesystem::path sourceDirectory;
};

struct WrittenModel {
    std::filesystem::path file;
    std::filesystem::path externalDataFile;  // empty when every tensor is inline
    std::uint64_t modelBytes = 0;            // the .onnx file
    std::uint64_t externalBytes = 0;         // the .data file
    std::uint64_t totalBytes() const { return modelBytes + externalBytes; }
};

// Writes `model` to `file`. Moves large tensors' raw_data out of `model` into the external file
// when the options ask for it (freeing each tensor's bytes once written, so a model over 2 GB is
// never held twice), and the model afterwards refers to that file. Tensors still external in
// `model` are copied through their mapping (see `sourceDirectory`), or read inline when the model
// is written without a data file. Both files are written atomically, the data file first.
Result<WrittenModel> writeModelFile(onnx::ModelProto& model, const std::filesystem::path& file,
                                    const ModelWriteOptions& options = {});

// The model file plus every external data file it refers to (each counted once).
std::uint64_t modelBytesOnDisk(const onnx::ModelProto& model, const std::filesystem::path& file,
                               const std::filesystem::path& modelDirectory);

}  // namespace onnxlens
