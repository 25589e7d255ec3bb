#pragma once
// SessionOptions::maxTensorBytes, per session: the limit holds on the thread that compiles or runs
// the session, for as long as the scope lives (tensors are allocated on that thread; the intra-op
// threads only fill them), so two sessions in one process keep their own limits. Callers use it
// too around inputs they make for a session (onnxlens-cli --max-memory).
#include <cstdint>

namespace onnxlens::engine {

class ScopedTensorByteLimit {
  public:
    explicit ScopedTensorByteLimit(std::uint64_t bytes);  // 0: the process default
    ~ScopedTensorByteLimit();
    ScopedTensorByteLimit(const ScopedTensorByteLimit&) = delete;
    ScopedTensorByteLimit& operator=(const ScopedTensorByteLimit&) = delete;

  private:
    std::uint64_t saved_;
};

}  // namespace onnxlens::engine
