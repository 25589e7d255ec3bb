#pragma once
// Choosing input values for a run: files given by the user, seeded random data for the rest,
// symbolic dims bound by name and unnamed (`?`) dims by "INPUT:AXIS" (unbound ones default to
// 1), integer inputs that index a table kept inside that table.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

// Symbol name -> value, and "INPUT:AXIS" -> value for one axis of one input (unnamed `?` dims,
// or a symbolic dim set for that input alone).
using SymbolBindings = std::map<std::string, std::int64_t>;

// The key that binds axis `axis` of input `input`: "input:axis".
std::string axisBindingKey(const std::string& input, int axis);

// The concrete shape of a tensor type: dim_value as is, then `symbols`' "input:axis" entry (when
// `input` is given), then the dim_param's entry, else `unboundDefault`.
Shape concreteShape(const onnx::TypeProto& type, const SymbolBindings& symbols,
                    std::int64_t unboundDefault = 1, const std::string& input = {});

// The values `feeds` (an example: a test data set's inputs) give the inputs' symbols and unnamed
// dims ("input:axis"). A symbol seen with two values keeps the first.
SymbolBindings bindingsOfFeeds(const std::vector<Session::IoInfo>& inputs,
                               const std::map<std::string, Value>& feeds);
// The same from the feeds' shapes alone (a run's record of what each input got).
SymbolBindings bindingsOfShapes(const std::vector<Session::IoInfo>& inputs,
                                const std::map<std::string, Shape>& shapes);

// The dims of the session's inputs that are neither a number nor a symbol, as "input:axis" keys.
std::vector<std::string> unknownInputDims(const std::vector<Session::IoInfo>& inputs);

// The values random data of an integer input may take, and why.
struct ValueRange {
    double low = 0, high = 9;  // inclusive for integers
    std::string reason;        // "indexes the 2 rows of 'type_embeddings' (Gather /emb/Gather_1)"
};
using ValueRanges = std::map<std::string, ValueRange>;  // by input name

// Integer graph inputs whose values index a table: followed through value-preserving ops (Cast,
// Unsqueeze, Reshape, Flatten, Transpose, Slice, Concat ...) to the Gather whose data is a
// constant or typed table (values 0..rows-1 of the gathered axis) and the OneHot whose depth is a
// constant (0..depth-1). Several readers: the narrowest range.
ValueRanges inferIndexRanges(const onnx::GraphProto& graph);

// The ranges random integer inputs get: the graph's index ranges (inferIndexRanges on the
// session's graph), replaced by `overrides` (a test data set's values, --int-range, the Run dock).
ValueRanges integerInputRanges(const Session& session, const ValueRanges& overrides = {});

// The smallest and largest value of every integer tensor among `feeds` (a test data set's inputs).
ValueRanges observedIntegerRanges(const std::map<std::string, Value>& feeds);

// "NAME=LO,HI" (--int-range): the range for input NAME; an error names the text.
Result<std::pair<std::string, ValueRange>> parseIntegerRange(const std::string& text);

// Seeded random data: floats uniform in [-1, 1), integers in [0, 10), bools 50/50, strings
// "s<k>". The same seed, type and shape always give the same values.
Tensor randomTensor(DataType type, const Shape& shape, std::uint64_t seed);
// Seeded random data in a chosen range: floats uniform in [low, high), integers uniform in
// [ceil(low), floor(high)] (clamped to the type), bools 50/50, strings as randomTensor.
Tensor randomTensorInRange(DataType type, const Shape& shape, std::uint64_t seed, double low,
                           double high);
// Every element `value` (numeric and bool types; 0 and 1 for zeros and ones).
Tensor filledTensor(DataType type, const Shape& shape, double value);

// Feeds for every session input: `files` (input name -> .pb/.npy path) first, random data from
// `seed` for the rest (each input seeded by seed + its position; integer inputs within `ranges`
// when they are there, else 0..9). Errors name the input and file: a file whose dtype differs
// from the input's, or whose rank/static dims do not fit.
Result<std::map<std::string, Value>> prepareFeeds(
    const std::vector<Session::IoInfo>& inputs,
    const std::map<std::string, std::filesystem::path>& files, const SymbolBindings& symbols,
    std::uint64_t seed, const ValueRanges& ranges = {});

// The same for every input of `session`, integer ranges from integerInputRanges(session,
// `overrides`): what run, bench, compare and the dynamic-axes check use.
Result<std::map<std::string, Value>> prepareSessionFeeds(
    const Session& session, const std::map<std::string, std::filesystem::path>& files,
    const SymbolBindings& symbols, std::uint64_t seed, const ValueRanges& overrides = {});

// Checks a value against a declared type: kind, dtype, rank, static dims. Empty when it fits.
std::string describeTypeMismatch(const Value& value, const onnx::TypeProto& type);

}  // namespace onnxlens::engine
