#pragma once
#include <concepts>
#include <stdexcept>
#include <string>
#include <type_traits>

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
// The message is made only when the condition fails: `require(ok, [&] { return "..." +
// shapeToString(s); })`. Kernels check their inputs on every run, and a message joined eagerly
// cost heap blocks each time (strings were 29% of MobileNetV2's allocations per run).
template <class MakeMessage>
requires std::convertible_to<std::invoke_result_t<MakeMessage&>, std::string>
inline void require(bool condition, MakeMessage&& makeMessage) {
    if (!condition) throw EngineError(std::string(makeMessage()));
}

}  // namespace onnxlens::engine
