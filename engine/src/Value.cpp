#include "onnxlens/engine/Value.h"

namespace onnxlens::engine {

const char* valueKindName(Value::Kind k) {
    switch (k) {
        case Value::Kind::None:
            return "an empty optional";
        case Value::Kind::Tensor:
            return "a tensor";
        case Value::Kind::Sequence:
            return "a sequence";
        case Value::Kind::Map:
            return "a map";
        case Value::Kind::MapSequence:
            return "a sequence of maps";
    }
    return "?";
}

namespace {
[[noreturn]] void throwKind(const char* expected, Value::Kind got) {
    throw EngineError(std::string("expected ") + expected + ", got " + valueKindName(got));
}
}  // namespace

Value Value::map(Tensor keys, Tensor values) {
    if (keys.dtype() != DataType::Int64 && keys.dtype() != DataType::String)
        throw EngineError(std::string("map keys must be int64 or string, not ") +
                          dataTypeName(keys.dtype()));
    if (keys.rank() != 1 || values.rank() != 1 || keys.numel() != values.numel())
        throw EngineError("a map needs 1-D keys and values of the same length, got " +
                          shapeToString(keys.shape()) + " and " + shapeToString(values.shape()));
    Value v;
    v.kind_ = Kind::Map;
    v.keyType_ = keys.dtype();
    v.elementType_ = values.dtype();
    v.keys_ = std::move(keys);
    v.tensor_ = std::move(values);
    return v;
}

Value Value::mapSequence(std::vector<Value> maps, DataType keyType, DataType valueType) {
    for (const auto& m : maps)
        if (!m.isMap() || m.keyType_ != keyType || m.elementType_ != valueType)
            throw EngineError(std::string("a sequence of maps from ") + dataTypeName(keyType) +
                              " to " + dataTypeName(valueType) + " holds another kind of item");
    Value v;
    v.kind_ = Kind::MapSequence;
    v.keyType_ = keyType;
    v.elementType_ = valueType;
    v.maps_ = std::make_shared<std::vector<Value>>(std::move(maps));
    return v;
}

Tensor& Value::tensor() {
    if (kind_ != Kind::Tensor) throwKind("a tensor", kind_);
    return tensor_;
}
const Tensor& Value::tensor() const {
    if (kind_ != Kind::Tensor) throwKind("a tensor", kind_);
    return tensor_;
}
const std::vector<Tensor>& Value::sequence() const {
    if (kind_ != Kind::Sequence) throwKind("a sequence", kind_);
    return *sequence_;
}
const Tensor& Value::mapKeys() const {
    if (kind_ != Kind::Map) throwKind("a map", kind_);
    return keys_;
}
const Tensor& Value::mapValues() const {
    if (kind_ != Kind::Map) throwKind("a map", kind_);
    return tensor_;
}
const std::vector<Value>& Value::maps() const {
    if (kind_ != Kind::MapSequence) throwKind("a sequence of maps", kind_);
    return *maps_;
}

}  // namespace onnxlens::engine
