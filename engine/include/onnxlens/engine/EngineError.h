#pragma once
#include <stdexcept>
#include <string>

namespace onnxlens::engine {

// Thrown by kernels and the executor; Session::run turns it into an Error value naming the node.
class EngineError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Thrown between nodes when RunControl::cancel is set.
class RunCancelled : public EngineError {
  public:
    RunCancelled() : EngineError("run cancelled") {}
};

[[noreturn]] inline void fail(const std::string& message) { throw EngineError(message); }

inline void require(bool condition, const char* message) {
    if (!condition) throw EngineError(message);
}
inline void require(bool condition, const std::string& message) {
    if (!condition) throw EngineError(message);
}

}  // namespace onnxlens::engine
