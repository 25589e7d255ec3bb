#include "onnxlens/workflows/InputPreparation.h"

#include <cmath>
#include <limits>
#include <random>

#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine {

Shape concreteShape(const onnx::TypeProto& type, const SymbolBindings& symbols,
                    std::int64_t unboundDefault) {
    Shape shape;
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return shape;
    for (const auto& dim : type.tensor_type().shape().dim()) {
        if (dim.has_dim_value()) {
            shape.push_back(dim.dim_value());
        } else if (dim.has_dim_param()) {
            auto it = symbols.find(dim.dim_param());
            shape.push_back(it != symbols.end() ? it->second : unboundDefault);
        } else {
            shape.push_back(unboundDefault);
        }
    }
    return shape;
}

Tensor randomTensor(DataType type, const Shape& shape, std::uint64_t seed) {
    Tensor t(type, shape);
    std::mt19937_64 rng(seed);
    const std::int64_t n = t.numel();
    if (type == DataType::String) {
        auto* s = t.data<std::string>();
        for (std::int64_t i = 0; i < n; ++i) s[i] = "s" + std::to_string(rng() % 100);
        return t;
    }
    if (type == DataType::Bool) {
        auto* b = t.data<bool>();
        for (std::int64_t i = 0; i < n; ++i) b[i] = (rng() & 1) != 0;
        return t;
    }
    dispatchNumeric(type, [&]<class T>() {
        T* out = t.data<T>();
        if constexpr (std::is_integral_v<T>) {
            std::uniform_int_distribution<int> dist(0, 9);
            for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(rng));
        } else {
            std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
            for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(rng));
        }
    });
    return t;
}

Tensor randomTensorInRange(DataType type, const Shape& shape, std::uint64_t seed, double low, double high) {
    if (type == DataType::String || type == DataType::Bool) return randomTensor(type, shape, seed);
    require(low <= high, "random range " + std::to_string(low) + ".." + std::to_string(high) + " is empty");
    Tensor t(type, shape);
    std::mt19937_64 rng(seed);
    const std::int64_t n = t.numel();
    dispatchNumeric(type, [&]<class T>() {
        T* out = t.data<T>();
        if constexpr (std::is_integral_v<T>) {
            const double lo = std::max<double>(std::ceil(low), static_cast<double>(std::numeric_limits<T>::lowest()));
            // long long bounds the distribution (uint64's top half is out of reach, on purpose).
            const double hi = std::min({std::floor(high), static_cast<double>(std::numeric_limits<T>::max()), 9.0e18});
            require(lo <= hi, "random range " + std::to_string(low) + ".." + std::to_string(high) +
                                  " holds no " + dataTypeName(type) + " value");
            std::uniform_int_distribution<long long> dist(static_cast<long long>(lo), static_cast<long long>(hi));
            for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(rng));
        } else {
            std::uniform_real_distribution<double> dist(low, high);
            for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(low == high ? low : dist(rng));
        }
    });
    return t;
}

Tensor filledTensor(DataType type, const Shape& shape, double value) {
    Tensor t(type, shape);
    dispatchNumericOrBool(type, [&]<class T>() {
        const T v = static_cast<T>(static_cast<float>(value));
        for (T& x : t.span<T>()) x = v;
    });
    return t;
}

std::string describeTypeMismatch(const Value& value, const onnx::TypeProto& type) {
    if (type.has_sequence_type()) {
        const bool ofMaps = type.sequence_type().elem_type().has_map_type();
        if (ofMaps) return value.isMapSequence() ? "" : "expected a sequence of maps";
        return value.isSequence() ? "" : "expected a sequence";
    }
    if (type.has_map_type()) return value.isMap() ? "" : "expected a map";
    if (type.has_optional_type()) return "";
    if (!type.has_tensor_type()) return "";
    if (!value.isTensor()) return "expected a tensor";
    const Tensor& t = value.tensor();
    const auto expectedType = static_cast<DataType>(type.tensor_type().elem_type());
    if (expectedType != DataType::Undefined && t.dtype() != expectedType)
        return std::string("dtype ") + dataTypeName(t.dtype()) + " does not match the input's " +
               dataTypeName(expectedType);
    if (!type.tensor_type().has_shape()) return "";
    const auto& dims = type.tensor_type().shape().dim();
    if (t.rank() != dims.size())
        return "shape " + shapeToString(t.shape()) + " has rank " + std::to_string(t.rank()) +
               ", the input has rank " + std::to_string(dims.size());
    for (int i = 0; i < dims.size(); ++i)
        if (dims[i].has_dim_value() && dims[i].dim_value() != t.shape()[static_cast<std::size_t>(i)])
            return "shape " + shapeToString(t.shape()) + " does not fit the input's dim " +
                   std::to_string(i) + " = " + std::to_string(dims[i].dim_value());
    return "";
}

Result<std::map<std::string, Value>> prepareFeeds(
    const std::vector<Session::IoInfo>& inputs,
    const std::map<std::string, std::filesystem::path>& files, const SymbolBindings& symbols,
    std::uint64_t seed) {
    std::map<std::string, Value> feeds;
    for (const auto& [name, file] : files) {
        bool known = false;
        for (const auto& in : inputs) known = known || in.name == name;
        if (!known) return makeError(file.string(), "the model has no input named '" + name + "'");
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const auto& input = inputs[i];
        auto file = files.find(input.name);
        if (file != files.end()) {
            auto value = readValueFile(file->second, &input.type);
            if (!value) return value.error();
            std::string mismatch = describeTypeMismatch(*value, input.type);
            if (!mismatch.empty())
                return makeError(file->second.string(), "input '" + input.name + "': " + mismatch);
            feeds[input.name] = std::move(*value);
            continue;
        }
        if (!input.type.has_tensor_type())
            return makeError("input '" + input.name + "'",
                             "is not a tensor; give it a file with --input " + input.name + "=FILE");
        try {
            // Checked: an element type this engine does not know (float8, or garbage) is an error.
            const auto dtype = dataTypeFromOnnx(input.type.tensor_type().elem_type());
            feeds[input.name] = Value(randomTensor(dtype, concreteShape(input.type, symbols), seed + i));
        } catch (const EngineError& e) {
            return makeError("input '" + input.name + "'", e.what());
        }
    }
    return feeds;
}

}  // namespace onnxlens::engine
