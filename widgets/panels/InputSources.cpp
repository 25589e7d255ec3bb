#include "widgets/panels/InputSources.h"

#include "onnxlens/engine/TensorProto.h"

namespace onnxlens::widgets {

using engine::DataType;

std::pair<double, double> defaultRandomRange(DataType type) {
    if (engine::isInteger(type)) return {0, 9};
    return {-1, 1};
}

const char* inputSourceName(InputSource::Kind kind) {
    switch (kind) {
        case InputSource::Kind::Random:
            return "random";
        case InputSource::Kind::Zeros:
            return "zeros";
        case InputSource::Kind::Ones:
            return "ones";
        case InputSource::Kind::File:
            return "file";
        case InputSource::Kind::Image:
            return "image";
        case InputSource::Kind::Positions:
            return "positions";
    }
    return "random";
}

Error PreparedFeeds::combinedError() const {
    std::string message;
    for (const auto& [name, problem] : inputErrors)
        message += (message.empty() ? "" : "; ") + ("input '" + name + "': " + problem);
    return Error{message};
}

namespace {

// first, first + 1, ... along the last axis of `shape`, every row alike, as `dtype`.
engine::Tensor positionsTensor(DataType dtype, const engine::Shape& shape, double first) {
    if (!engine::isInteger(dtype) && !engine::isFloatingPoint(dtype))
        throw std::invalid_argument(std::string("positions cannot fill a ") +
                                    engine::dataTypeName(dtype) + " input");
    engine::Tensor positions = engine::filledTensor(DataType::Int64, shape, 0);
    const std::int64_t count = positions.numel();
    const std::int64_t row = shape.empty() ? 1 : shape.back();
    const auto start = first >= 0 && first <= 1e15 ? static_cast<std::int64_t>(first) : 0;
    auto* data = positions.data<std::int64_t>();
    for (std::int64_t i = 0; i < count && row > 0; ++i) data[i] = start + i % row;
    return dtype == DataType::Int64 ? positions : positions.castTo(dtype);
}

Result<engine::Value> valueFromSource(const engine::Session::IoInfo& input,
                                      const InputSource& source, const InputChoices& choices,
                                      std::uint64_t seed) {
    using Kind = InputSource::Kind;
    if (source.kind == Kind::File) {
        if (source.file.empty()) return Error{"no file chosen"};
        auto value = engine::readValueFile(source.file, &input.type);
        if (!value) return value.error();
        const std::string mismatch = engine::describeTypeMismatch(*value, input.type);
        if (!mismatch.empty()) return makeError(source.file.string(), mismatch);
        return value;
    }
    if (!input.type.has_tensor_type())
        return Error{"is not a tensor: choose a .pb file holding its value"};
    const DataType dtype = engine::dataTypeOfTypeProto(input.type);
    const engine::Shape shape = engine::concreteShape(input.type, choices.symbols, 1, input.name);
    if (source.kind == Kind::Image) {
        if (source.file.empty()) return Error{"no image chosen"};
        auto tensor = imageToTensor(source.file, shape, dtype, choices.image);
        if (!tensor) return tensor.error();
        return engine::Value(std::move(*tensor));
    }
    try {
        if (source.kind == Kind::Zeros) return engine::Value(engine::filledTensor(dtype, shape, 0));
        if (source.kind == Kind::Ones) return engine::Value(engine::filledTensor(dtype, shape, 1));
        if (source.kind == Kind::Positions)
            return engine::Value(positionsTensor(dtype, shape, source.low));
        return engine::Value(
            engine::randomTensorInRange(dtype, shape, seed, source.low, source.high));
    } catch (const std::exception& e) {
        return Error{e.what()};
    }
}

// An integer input that indexes a table stays inside it; others get the dtype's default.
std::pair<double, double> randomRangeOf(const engine::Session::IoInfo& input,
                                        const InputChoices& choices) {
    const DataType dtype = engine::dataTypeOfTypeProto(input.type);
    if (auto it = choices.integerRanges.find(input.name);
        it != choices.integerRanges.end() && engine::isInteger(dtype))
        return {it->second.low, it->second.high};
    return defaultRandomRange(dtype);
}

}  // namespace

PreparedFeeds prepareInputFeeds(const InputChoices& choices) {
    PreparedFeeds prepared;
    for (std::size_t i = 0; i < choices.inputs.size(); ++i) {
        const auto& input = choices.inputs[i];
        InputSource source;
        if (auto it = choices.sources.find(input.name); it != choices.sources.end())
            source = it->second;
        else
            std::tie(source.low, source.high) = randomRangeOf(input, choices);
        auto value = valueFromSource(input, source, choices, choices.seed + i);
        if (value)
            prepared.feeds[input.name] = std::move(*value);
        else
            prepared.inputErrors[input.name] = value.error().message;
    }
    return prepared;
}

engine::FeedMaker feedMakerForOtherShapes(const InputChoices& choices) {
    InputChoices generated = choices;
    // Integer inputs read from a file (a test data set) keep that file's range of values.
    std::map<std::string, std::filesystem::path> integerFiles;
    for (auto& [name, source] : generated.sources)
        if (source.kind == InputSource::Kind::File || source.kind == InputSource::Kind::Image) {
            for (const auto& input : generated.inputs)
                if (input.name == name && source.kind == InputSource::Kind::File &&
                    engine::isInteger(engine::dataTypeOfTypeProto(input.type)))
                    integerFiles[name] = source.file;
            source = InputSource{};
            for (const auto& input : generated.inputs)
                if (input.name == name)
                    std::tie(source.low, source.high) = randomRangeOf(input, generated);
        }
    return
        [generated, integerFiles](
            const engine::SymbolBindings& symbols) -> Result<std::map<std::string, engine::Value>> {
            InputChoices c = generated;
            c.symbols = symbols;
            for (const auto& [name, file] : integerFiles) {
                std::map<std::string, engine::Value> example;
                if (auto value = engine::readValueFile(file)) example[name] = std::move(*value);
                for (const auto& [input, range] : engine::observedIntegerRanges(example)) {
                    c.sources[input].low = range.low;
                    c.sources[input].high = range.high;
                }
            }
            PreparedFeeds prepared = prepareInputFeeds(c);
            if (!prepared.ok()) return prepared.combinedError();
            return std::move(prepared.feeds);
        };
}

}  // namespace onnxlens::widgets
