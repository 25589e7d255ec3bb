#pragma once
// Short builders shared by the shape-manipulation and indexing kernel tests: typed input
// values, one-node specs with attributes and opset, and the engine's error for a failing run.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "OpTestHarness.h"

namespace onnxlens::testing::data_movement {

using I = std::vector<std::int64_t>;
using F = std::vector<float>;
using S = std::vector<std::string>;

template <class T>
std::vector<T> valuesOf(const Tensor& t) {
    auto s = t.span<T>();
    return {s.begin(), s.end()};
}

inline Value ints(Shape shape, I values) {
    return Value(makeTensor<std::int64_t>(std::move(shape), std::move(values)));
}
inline Value floats(Shape shape, F values) {
    return Value(makeTensor<float>(std::move(shape), std::move(values)));
}
inline Value strings(Shape shape, S values) {
    return Value(makeTensor<std::string>(std::move(shape), std::move(values)));
}
// 0, 1, 2, ... as float32: every element tells where it came from.
inline Value iota(Shape shape) {
    Tensor t(DataType::Float, shape);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
    return Value(t);
}

inline OneNodeSpec node(std::string op, std::vector<Value> inputs,
                        std::function<void(onnx::NodeProto&)> attributes = {}, int opset = 17,
                        int outputs = 1) {
    OneNodeSpec spec;
    spec.opType = std::move(op);
    spec.inputs = std::move(inputs);
    spec.attributes = std::move(attributes);
    spec.opset = opset;
    spec.outputCount = outputs;
    return spec;
}

// The engine's error message, or "" when the run succeeded.
inline std::string errorOf(const OneNodeSpec& spec) {
    auto result = runOneNode(spec);
    return result ? std::string() : result.error().message;
}

}  // namespace onnxlens::testing::data_movement
