#pragma once
// What flows along a graph edge: a tensor, a sequence of tensors, or an empty optional.
#include <memory>
#include <vector>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine {

class Value {
public:
    enum class Kind { None, Tensor, Sequence };

    Value() = default;  // None: an absent optional / empty optional value
    Value(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}  // NOLINT
    static Value sequence(std::vector<Tensor> items, DataType elementType) {
        Value v;
        v.kind_ = Kind::Sequence;
        v.sequence_ = std::make_shared<std::vector<Tensor>>(std::move(items));
        v.elementType_ = elementType;
        return v;
    }

    Kind kind() const { return kind_; }
    bool isNone() const { return kind_ == Kind::None; }
    bool isTensor() const { return kind_ == Kind::Tensor; }
    bool isSequence() const { return kind_ == Kind::Sequence; }

    // Throw EngineError when the value is of another kind.
    Tensor& tensor();
    const Tensor& tensor() const;
    const std::vector<Tensor>& sequence() const;
    DataType sequenceElementType() const { return elementType_; }

private:
    Kind kind_ = Kind::None;
    Tensor tensor_;
    std::shared_ptr<const std::vector<Tensor>> sequence_;
    DataType elementType_ = DataType::Undefined;
};

}  // namespace onnxlens::engine
