#pragma once
// What flows along a graph edge: a tensor, a sequence of tensors, a map, a sequence of maps
// (ZipMap's output), or an empty optional.
#include <memory>
#include <vector>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine {

class Value {
  public:
    enum class Kind { None, Tensor, Sequence, Map, MapSequence };

    Value() = default;  // None: an absent optional / empty optional value
    Value(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}  // NOLINT
    static Value sequence(std::vector<Tensor> items, DataType elementType) {
        Value v;
        v.kind_ = Kind::Sequence;
        v.sequence_ = std::make_shared<std::vector<Tensor>>(std::move(items));
        v.elementType_ = elementType;
        return v;
    }
    // A map as two 1-D tensors of the same length: keys (int64 or string, each once) and the
    // values, entry i being keys[i] -> values[i]. Throws EngineError when they do not fit.
    static Value map(Tensor keys, Tensor values);
    // A sequence of maps, every one with these key and value types.
    static Value mapSequence(std::vector<Value> maps, DataType keyType, DataType valueType);

    Kind kind() const { return kind_; }
    bool isNone() const { return kind_ == Kind::None; }
    bool isTensor() const { return kind_ == Kind::Tensor; }
    bool isSequence() const { return kind_ == Kind::Sequence; }
    bool isMap() const { return kind_ == Kind::Map; }
    bool isMapSequence() const { return kind_ == Kind::MapSequence; }

    // Throw EngineError when the value is of another kind.
    Tensor& tensor();
    const Tensor& tensor() const;
    const std::vector<Tensor>& sequence() const;
    DataType sequenceElementType() const { return elementType_; }
    const Tensor& mapKeys() const;
    const Tensor& mapValues() const;
    const std::vector<Value>& maps() const;
    // Key and value types of a map or a sequence of maps.
    DataType mapKeyType() const { return keyType_; }
    DataType mapValueType() const { return elementType_; }

  private:
    Kind kind_ = Kind::None;
    Tensor tensor_;  // the tensor, or a map's values
    Tensor keys_;    // a map's keys
    std::shared_ptr<const std::vector<Tensor>> sequence_;
    std::shared_ptr<const std::vector<Value>> maps_;
    DataType elementType_ = DataType::Undefined;
    DataType keyType_ = DataType::Undefined;
};

// "a tensor", "a sequence", "a map", "a sequence of maps", "an empty optional".
const char* valueKindName(Value::Kind kind);

}  // namespace onnxlens::engine
