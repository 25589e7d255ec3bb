#pragma once
// Errors are values: every fallible operation of the model and engine libraries returns
// Result<T>, whose error names the file (or node) and what is wrong with it.
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace onnxlens {

struct Error {
    std::string
        message;  // one line, already naming the file/node: "model.onnx: truncated protobuf"
};

inline Error makeError(const std::string& where, const std::string& what) {
    return Error{where.empty() ? what : where + ": " + what};
}

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit on purpose
    Result(Error error) : state_(std::move(error)) {}  // NOLINT

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        check();
        return std::get<0>(state_);
    }
    const T& value() const& {
        check();
        return std::get<0>(state_);
    }
    T&& value() && {
        check();
        return std::get<0>(std::move(state_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(state_); }

  private:
    void check() const {
        if (!ok()) throw std::logic_error("Result::value() on error: " + error().message);
    }
    std::variant<T, Error> state_;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace onnxlens
