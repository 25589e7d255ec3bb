#include "onnxlens/workflows/InputPreparation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <set>

#include "onnxlens/engine/LowPrecisionFloat.h"
#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::engine {

std::string axisBindingKey(const std::string& input, int axis) {
    return input + ":" + std::to_string(axis);
}

Shape concreteShape(const onnx::TypeProto& type, const SymbolBindings& symbols,
                    std::int64_t unboundDefault, const std::string& input) {
    Shape shape;
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return shape;
    const auto& dims = type.tensor_type().shape().dim();
    for (int axis = 0; axis < dims.size(); ++axis) {
        const auto& dim = dims[axis];
        auto byAxis = input.empty() ? symbols.end() : symbols.find(axisBindingKey(input, axis));
        if (dim.has_dim_value()) {
            shape.push_back(dim.dim_value());
        } else if (byAxis != symbols.end()) {
            shape.push_back(byAxis->second);
        } else if (dim.has_dim_param()) {
            auto it = symbols.find(dim.dim_param());
            shape.push_back(it != symbols.end() ? it->second : unboundDefault);
        } else {
            shape.push_back(unboundDefault);
        }
    }
    return shape;
}

SymbolBindings bindingsOfShapes(const std::vector<Session::IoInfo>& inputs,
                                const std::map<std::string, Shape>& shapes) {
    SymbolBindings bindings;
    for (const auto& input : inputs) {
        auto it = shapes.find(input.name);
        if (it == shapes.end() || !input.type.has_tensor_type() ||
            !input.type.tensor_type().has_shape())
            continue;
        const Shape& shape = it->second;
        const auto& dims = input.type.tensor_type().shape().dim();
        if (static_cast<std::size_t>(dims.size()) != shape.size()) continue;
        for (int axis = 0; axis < dims.size(); ++axis) {
            if (dims[axis].has_dim_value()) continue;
            const std::string key = dims[axis].has_dim_param() ? dims[axis].dim_param()
                                                               : axisBindingKey(input.name, axis);
            bindings.emplace(key, shape[static_cast<std::size_t>(axis)]);
        }
    }
    return bindings;
}

SymbolBindings bindingsOfFeeds(const std::vector<Session::IoInfo>& inputs,
                               const std::map<std::string, Value>& feeds) {
    std::map<std::string, Shape> shapes;
    for (const auto& [name, value] : feeds)
        if (value.isTensor()) shapes.emplace(name, value.tensor().shape());
    return bindingsOfShapes(inputs, shapes);
}

std::vector<std::string> unknownInputDims(const std::vector<Session::IoInfo>& inputs) {
    std::vector<std::string> keys;
    for (const auto& input : inputs) {
        if (!input.type.has_tensor_type() || !input.type.tensor_type().has_shape()) continue;
        const auto& dims = input.type.tensor_type().shape().dim();
        for (int axis = 0; axis < dims.size(); ++axis)
            if (!dims[axis].has_dim_value() && !dims[axis].has_dim_param())
                keys.push_back(axisBindingKey(input.name, axis));
    }
    return keys;
}

namespace {

// Ops whose output holds (some of) the values of input 0 unchanged: indices keep indexing the
// same table after them.
bool preservesValues(const std::string& op) {
    static const char* const kOps[] = {"Cast",     "Unsqueeze", "Squeeze",   "Reshape", "Flatten",
                                       "Identity", "Expand",    "Transpose", "Slice",   "Concat",
                                       "Tile",     "Gather",    "Split",     "CastLike"};
    for (const char* name : kOps)
        if (op == name) return true;
    return false;
}

// Dims of a constant or typed value of the graph: an initializer, a Constant node's tensor, or a
// value_info / input with a fully known shape.
std::optional<std::vector<std::int64_t>> knownDims(const onnx::GraphProto& graph,
                                                   const std::string& name) {
    for (const auto& init : graph.initializer())
        if (init.name() == name)
            return std::vector<std::int64_t>(init.dims().begin(), init.dims().end());
    for (const auto& node : graph.node())
        if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name)
            for (const auto& attr : node.attribute())
                if (attr.name() == "value" && attr.has_t())
                    return std::vector<std::int64_t>(attr.t().dims().begin(),
                                                     attr.t().dims().end());
    const auto fromInfo =
        [&](const onnx::ValueInfoProto& info) -> std::optional<std::vector<std::int64_t>> {
        if (info.name() != name || !info.type().tensor_type().has_shape()) return std::nullopt;
        std::vector<std::int64_t> dims;
        for (const auto& d : info.type().tensor_type().shape().dim()) {
            if (!d.has_dim_value()) return std::nullopt;
            dims.push_back(d.dim_value());
        }
        return dims;
    };
    for (const auto& info : graph.value_info())
        if (auto d = fromInfo(info)) return d;
    return std::nullopt;
}

// The single number a constant holds (OneHot's depth), when its bytes are still there.
std::optional<double> constantScalar(const onnx::GraphProto& graph, const std::string& name) {
    const onnx::TensorProto* proto = nullptr;
    for (const auto& init : graph.initializer())
        if (init.name() == name) proto = &init;
    for (const auto& node : graph.node())
        if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name)
            for (const auto& attr : node.attribute())
                if (attr.name() == "value" && attr.has_t()) proto = &attr.t();
    if (!proto) return std::nullopt;
    try {
        const Tensor t = tensorFromProto(*proto);
        if (t.numel() != 1 || t.dtype() == DataType::String) return std::nullopt;
        return t.valueAsDouble(0);
    } catch (const std::exception&) {
        return std::nullopt;  // bytes released by the session, or not a number
    }
}

std::int64_t intAttribute(const onnx::NodeProto& node, const std::string& name,
                          std::int64_t fallback) {
    for (const auto& attr : node.attribute())
        if (attr.name() == name) return attr.i();
    return fallback;
}

std::string nodeLabel(const onnx::NodeProto& node) {
    return node.op_type() + (node.name().empty() ? std::string() : " " + node.name());
}

}  // namespace

ValueRanges inferIndexRanges(const onnx::GraphProto& graph) {
    std::map<std::string, std::vector<const onnx::NodeProto*>> readers;
    for (const auto& node : graph.node())
        for (int i = 0; i < node.input_size(); ++i)
            if (!node.input(i).empty()) readers[node.input(i)].push_back(&node);
    std::set<std::string> initializers;
    for (const auto& init : graph.initializer()) initializers.insert(init.name());

    ValueRanges ranges;
    for (const auto& input : graph.input()) {
        if (initializers.count(input.name()) || !input.type().has_tensor_type()) continue;
        const auto elem = input.type().tensor_type().elem_type();
        if (elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE ||
            elem == onnx::TensorProto::FLOAT16 || elem == onnx::TensorProto::BFLOAT16 ||
            elem == onnx::TensorProto::BOOL || elem == onnx::TensorProto::STRING)
            continue;
        std::optional<ValueRange> best;
        const auto narrow = [&](double high, std::string reason) {
            if (high < 0) return;
            if (!best || high < best->high) best = ValueRange{0, high, std::move(reason)};
        };
        std::vector<std::string> frontier{input.name()};
        std::set<std::string> seen{input.name()};
        while (!frontier.empty() && seen.size() < 256) {
            const std::string value = frontier.back();
            frontier.pop_back();
            auto it = readers.find(value);
            if (it == readers.end()) continue;
            for (const onnx::NodeProto* node : it->second) {
                const std::string& op = node->op_type();
                if (op == "Gather" && node->input_size() == 2 && node->input(1) == value) {
                    if (auto dims = knownDims(graph, node->input(0)); dims && !dims->empty()) {
                        std::int64_t axis = intAttribute(*node, "axis", 0);
                        if (axis < 0) axis += static_cast<std::int64_t>(dims->size());
                        if (axis >= 0 && axis < static_cast<std::int64_t>(dims->size())) {
                            const std::int64_t rows = (*dims)[static_cast<std::size_t>(axis)];
                            narrow(static_cast<double>(rows - 1),
                                   "indexes the " + std::to_string(rows) + " rows of '" +
                                       node->input(0) + "' (" + nodeLabel(*node) + ")");
                        }
                    }
                    continue;
                }
                if (op == "OneHot" && node->input_size() >= 2 && node->input(0) == value) {
                    if (auto depth = constantScalar(graph, node->input(1)))
                        narrow(*depth - 1, "is one-hot encoded with depth " +
                                               std::to_string(static_cast<std::int64_t>(*depth)) +
                                               " (" + nodeLabel(*node) + ")");
                    continue;
                }
                // Only the data input carries the values on (Reshape's shape does not).
                const bool carries =
                    op == "Concat" ? true : node->input_size() > 0 && node->input(0) == value;
                if (!preservesValues(op) || !carries) continue;
                for (const auto& out : node->output())
                    if (!out.empty() && seen.insert(out).second) frontier.push_back(out);
            }
        }
        if (best) ranges[input.name()] = *best;
    }
    return ranges;
}

ValueRanges integerInputRanges(const Session& session, const ValueRanges& overrides) {
    ValueRanges ranges = inferIndexRanges(session.optimizedModel().graph());
    for (const auto& [name, range] : overrides) ranges[name] = range;
    return ranges;
}

ValueRanges observedIntegerRanges(const std::map<std::string, Value>& feeds) {
    ValueRanges ranges;
    for (const auto& [name, value] : feeds) {
        if (!value.isTensor() || !isInteger(value.tensor().dtype()) || value.tensor().numel() == 0)
            continue;
        const Tensor& t = value.tensor();
        double low = t.valueAsDouble(0), high = low;
        for (std::int64_t i = 1; i < t.numel(); ++i) {
            low = std::min(low, t.valueAsDouble(i));
            high = std::max(high, t.valueAsDouble(i));
        }
        ranges[name] = ValueRange{low, high, "the test data set's values"};
    }
    return ranges;
}

Result<std::pair<std::string, ValueRange>> parseIntegerRange(const std::string& text) {
    const auto bad = [&] {
        return Error{"--int-range " + text + ": expected NAME=LO,HI with integers LO <= HI"};
    };
    const auto eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0) return bad();
    const std::string numbers = text.substr(eq + 1);
    const auto comma = numbers.find(',');
    if (comma == std::string::npos) return bad();
    long long low = 0, high = 0;
    const auto parse = [](const std::string& s, long long& out) {
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
    };
    if (!parse(numbers.substr(0, comma), low) || !parse(numbers.substr(comma + 1), high) ||
        low > high)
        return bad();
    return std::pair{text.substr(0, eq), ValueRange{static_cast<double>(low),
                                                    static_cast<double>(high), "--int-range"}};
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
    if (isLowPrecision(type)) {  // float8/float4/e8m0 from [-1, 1]; int4 0..7, uint4 0..9
        auto* codes = static_cast<std::uint8_t*>(t.raw());
        const bool integer = type == DataType::Int4 || type == DataType::UInt4;
        std::uniform_real_distribution<double> real(-1.0, 1.0);
        std::uniform_int_distribution<int> digit(0, type == DataType::Int4 ? 7 : 9);
        for (std::int64_t i = 0; i < n; ++i)
            codes[i] = lowp::lowPrecisionFromDouble(
                type, integer ? static_cast<double>(digit(rng)) : real(rng), true);
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

Tensor randomTensorInRange(DataType type, const Shape& shape, std::uint64_t seed, double low,
                           double high) {
    if (type == DataType::String || type == DataType::Bool) return randomTensor(type, shape, seed);
    require(low <= high,
            "random range " + std::to_string(low) + ".." + std::to_string(high) + " is empty");
    Tensor t(type, shape);
    std::mt19937_64 rng(seed);
    const std::int64_t n = t.numel();
    dispatchNumeric(type, [&]<class T>() {
        T* out = t.data<T>();
        if constexpr (std::is_integral_v<T>) {
            const double lo = std::max<double>(
                std::ceil(low), static_cast<double>(std::numeric_limits<T>::lowest()));
            // long long bounds the distribution (uint64's top half is out of reach, on purpose).
            const double hi = std::min(
                {std::floor(high), static_cast<double>(std::numeric_limits<T>::max()), 9.0e18});
            require(lo <= hi, "random range " + std::to_string(low) + ".." + std::to_string(high) +
                                  " holds no " + dataTypeName(type) + " value");
            std::uniform_int_distribution<long long> dist(static_cast<long long>(lo),
                                                          static_cast<long long>(hi));
            for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(rng));
        } else {
            std::uniform_real_distribution<double> dist(low, high);
            for (std::int64_t i = 0; i < n; ++i)
                out[i] = static_cast<T>(low == high ? low : dist(rng));
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
        if (dims[i].has_dim_value() &&
            dims[i].dim_value() != t.shape()[static_cast<std::size_t>(i)])
            return "shape " + shapeToString(t.shape()) + " does not fit the input's dim " +
                   std::to_string(i) + " = " + std::to_string(dims[i].dim_value());
    return "";
}

Result<std::map<std::string, Value>> prepareFeeds(
    const std::vector<Session::IoInfo>& inputs,
    const std::map<std::string, std::filesystem::path>& files, const SymbolBindings& symbols,
    std::uint64_t seed, const ValueRanges& ranges) {
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
            return makeError(
                "input '" + input.name + "'",
                "is not a tensor; give it a file with --input " + input.name + "=FILE");
        try {
            // Checked: an element type this engine does not know (garbage) is an error.
            const auto dtype = dataTypeFromOnnx(input.type.tensor_type().elem_type());
            const Shape shape = concreteShape(input.type, symbols, 1, input.name);
            auto range = ranges.find(input.name);
            feeds[input.name] =
                Value(range != ranges.end() && isInteger(dtype)
                          ? randomTensorInRange(dtype, shape, seed + i, range->second.low,
                                                range->second.high)
                          : randomTensor(dtype, shape, seed + i));
        } catch (const EngineError& e) {
            return makeError("input '" + input.name + "'", e.what());
        } catch (const std::bad_alloc&) {
            return makeError("input '" + input.name + "'", "out of memory making its random data");
        }
    }
    return feeds;
}

Result<std::map<std::string, Value>> prepareSessionFeeds(
    const Session& session, const std::map<std::string, std::filesystem::path>& files,
    const SymbolBindings& symbols, std::uint64_t seed, const ValueRanges& overrides) {
    return prepareFeeds(session.inputs(), files, symbols, seed,
                        integerInputRanges(session, overrides));
}

}  // namespace onnxlens::engine
