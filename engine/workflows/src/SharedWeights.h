#pragma once
// One copy of the weights two models share, for the numeric diff's two sessions: the first
// model's large inline initializers are written to a scratch file (64-byte aligned) and become
// external data pointing at it; the second model's initializers equal to one of them (same name,
// type, dims and bytes) point at the same bytes. Both sessions then map that one file
// (MappedFile.h: one mapping per file in the process) instead of each holding a heap copy, so a
// model compared with its optimized graph holds its weights once, and with its int8 version holds
// the float weights plus the int8 ones. The folder is removed with the object (after the
// sessions that map it are gone).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnxlens::engine {

class SharedWeights {
  public:
    // A fresh folder under the temporary directory; nullptr when it cannot be made.
    static std::unique_ptr<SharedWeights> create();
    ~SharedWeights();
    SharedWeights(const SharedWeights&) = delete;
    SharedWeights& operator=(const SharedWeights&) = delete;

    // The folder the rewritten models' external data resolves against.
    const std::filesystem::path& directory() const { return directory_; }

    // True when the model can take part: no external data of its own (its locations would
    // resolve against the scratch folder instead of its own).
    static bool eligible(const onnx::ModelProto& model);

    // The first model: writes each inline initializer of the main graph of at least kMinBytes to
    // the file and returns the model to compile, those initializers external. `exclusive`: nobody
    // else holds `model`, which is changed in place (each initializer's bytes freed once
    // written) and returned; otherwise a copy is returned and `model` is left as it was.
    // A write that fails (a full disk) leaves the initializers from there on inline.
    std::shared_ptr<onnx::ModelProto> addFirst(const std::shared_ptr<onnx::ModelProto>& model,
                                               bool exclusive);
    // The second model: its initializers equal to one of the first model's point at those bytes.
    std::shared_ptr<onnx::ModelProto> addSecond(const std::shared_ptr<onnx::ModelProto>& model,
                                                bool exclusive);

    std::uint64_t bytesWritten() const { return size_; }
    std::uint64_t bytesShared() const { return shared_; }

    static constexpr std::uint64_t kMinBytes = 4096;

  private:
    SharedWeights() = default;
    struct Entry {
        int dataType = 0;
        std::vector<std::int64_t> dims;
        std::uint64_t offset = 0, length = 0;
    };
    std::shared_ptr<onnx::ModelProto> add(const std::shared_ptr<onnx::ModelProto>& model,
                                          bool exclusive, bool first);
    bool sameBytes(const Entry& entry, const std::string& bytes) const;

    std::filesystem::path directory_, file_;
    std::unordered_map<std::string, Entry> entries_;
    std::uint64_t size_ = 0, shared_ = 0;
};

}  // namespace onnxlens::engine
