#include "onnxlens/engine/Value.h"

namespace onnxlens::engine {

namespace {
const char* kindName(Value::Kind k) {
    switch (k) {
        case Value::Kind::None: return "an empty optional";
        case Value::Kind::Tensor: return "a tensor";
        case Value::Kind::Sequence: return "a sequence";
    }
    return "?";
}
}  // namespace

Tensor& Value::tensor() {
    if (kind_ != Kind::Tensor) throw EngineError(std::string("expected a tensor, got ") + kindName(kind_));
    return tensor_;
}
const Tensor& Value::tensor() const {
    if (kind_ != Kind::Tensor) throw EngineError(std::string("expected a tensor, got ") + kindName(kind_));
    return tensor_;
}
const std::vector<Tensor>& Value::sequence() const {
    if (kind_ != Kind::Sequence)
        throw EngineError(std::string("expected a sequence, got ") + kindName(kind_));
    return *sequence_;
}

}  // namespace onnxlens::engine
