#pragma once
// A dense tensor: element type, shape and a reference-counted, 64-byte aligned buffer.
// Copies are shallow (they share the buffer); clone() copies the data. The buffer is either the
// tensor's own allocation or a view into memory another object keeps alive (view(): weights used
// in place inside a memory-mapped external data file).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onnxlens/engine/DataType.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine {

// The largest tensor the engine allocates (bytes). Default: half of physical memory.
std::uint64_t maxTensorBytes();
void setMaxTensorBytes(std::uint64_t bytes);

class Tensor {
  public:
    Tensor() = default;  // undefined type, no data
    // Allocates storage for the shape (contents uninitialised for POD types, "" for strings).
    // Throws EngineError when the shape is invalid or exceeds maxTensorBytes().
    Tensor(DataType type, Shape shape);
    // Same, with every byte zeroed (numeric 0, false).
    static Tensor zeros(DataType type, Shape shape);
    // A tensor over `bytes` (byteSize() of them, 64-byte aligned, never written: e.g. a read-only
    // file mapping), which stays valid while `owner` is held; shares `owner` instead of
    // allocating. Not for strings. Throws EngineError on a misaligned pointer or a bad shape.
    static Tensor view(DataType type, Shape shape, std::shared_ptr<const void> owner,
                       const void* bytes);

    template <class T>
    static Tensor scalar(const T& value) {
        Tensor t(dataTypeOf<T>, {});
        *t.data<T>() = value;
        return t;
    }
    template <class T>
    static Tensor fromVector(Shape shape, const std::vector<T>& values) {
        Tensor t(dataTypeOf<T>, std::move(shape));
        require(static_cast<std::size_t>(t.numel()) == values.size(),
                "Tensor::fromVector: value count does not match the shape");
        T* out = t.data<T>();
        for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
        return t;
    }

    bool defined() const { return type_ != DataType::Undefined; }
    DataType dtype() const { return type_; }
    const Shape& shape() const { return shape_; }
    std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
    std::int64_t dim(std::int64_t axis) const { return shape_.at(static_cast<std::size_t>(axis)); }
    std::int64_t numel() const { return numel_; }
    std::size_t byteSize() const { return static_cast<std::size_t>(numel_) * dataTypeSize(type_); }

    // Typed access; throws EngineError when T does not match dtype().
    template <class T>
    T* data() {
        checkType(dataTypeOf<T>);
        return static_cast<T*>(raw());
    }
    template <class T>
    const T* data() const {
        checkType(dataTypeOf<T>);
        return static_cast<const T*>(raw());
    }
    template <class T>
    std::span<T> span() {
        return {data<T>(), static_cast<std::size_t>(numel_)};
    }
    template <class T>
    std::span<const T> span() const {
        return {data<T>(), static_cast<std::size_t>(numel_)};
    }
    // Untyped access (no check); for strings this points at std::string objects.
    void* raw() { return storage_ ? static_cast<char*>(storage_.get()) : nullptr; }
    const void* raw() const {
        return storage_ ? static_cast<const char*>(storage_.get()) : nullptr;
    }

    // Reads element i of any numeric/bool type as double / int64 (for shape-like inputs).
    double valueAsDouble(std::int64_t index) const;
    std::int64_t valueAsInt64(std::int64_t index) const;
    // All elements as int64 (for shape, axes, pads... inputs of integer type).
    std::vector<std::int64_t> toInt64Vector() const;

    // A tensor sharing this buffer with another shape of the same element count.
    Tensor reshaped(Shape shape) const;
    // Deep copy.
    Tensor clone() const;
    // Converts every element to another type (numeric, bool, string).
    Tensor castTo(DataType target) const;
    bool sharesStorageWith(const Tensor& other) const { return storage_ == other.storage_; }
    // True when nobody else holds the buffer (in-place updates are safe).
    bool uniquelyOwned() const { return storage_.use_count() == 1; }

  private:
    void checkType(DataType requested) const;
    DataType type_ = DataType::Undefined;
    Shape shape_;
    std::int64_t numel_ = 0;
    std::shared_ptr<void> storage_;
};

}  // namespace onnxlens::engine
