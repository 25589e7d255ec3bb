// Fuzz target: tensor files. The first byte picks the format (.pb or .npy); the rest is the
// file, read by the model library and converted to an engine value.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/TensorByteLimit.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/TensorFile.h"

namespace {

std::filesystem::path scratchFile(const char* extension) {
    return std::filesystem::temp_directory_path() /
           ("onnxlens-fuzz-tensor-" + std::to_string(::getpid()) + extension);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    // Well under libFuzzer's -rss_limit_mb: a legitimate but huge tensor is the engine's error.
    const onnxlens::engine::ScopedTensorByteLimit limit(std::uint64_t{256} << 20);
    const auto file = scratchFile((data[0] & 1) ? ".npy" : ".pb");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
    }
    auto tensor = onnxlens::readTensorFile(file);
    if (tensor) {
        try {
            auto value = onnxlens::engine::tensorFromProto(*tensor);
            (void)value;
        } catch (const onnxlens::engine::EngineError&) {
        }
    }
    auto value = onnxlens::engine::readValueFile(file);
    (void)value;
    std::filesystem::remove(file);
    return 0;
}
