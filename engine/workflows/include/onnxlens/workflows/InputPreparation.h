#pragma once
// Choosing input values for a run: files given by the user, seeded random data for the rest,
// symbolic dims bound by name (unbound ones default to 1).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

using SymbolBindings = std::map<std::string, std::int64_t>;

// The concrete shape of a tensor type: dim_value as is, dim_param from `symbols` (default
// `unboundDefault`), unknown dims `unboundDefault`.
Shape concreteShape(const onnx::TypeProto& type, const SymbolBindings& symbols,
                    std::int64_t unboundDefault = 1);

// Seeded random data: floats uniform in [-1, 1), integers in [0, 10), bools 50/50, strings
// "s<k>". The same seed, type and shape always give the same values.
Tensor randomTensor(DataType type, const Shape& shape, std::uint64_t seed);
// Seeded random data in a chosen range: floats uniform in [low, high), integers uniform in
// [ceil(low), floor(high)] (clamped to the type), bools 50/50, strings as randomTensor.
Tensor randomTensorInRange(DataType type, const Shape& shape, std::uint64_t seed, double low, double high);
// Every element `value` (numeric and bool types; 0 and 1 for zeros and ones).
Tensor filledTensor(DataType type, const Shape& shape, double value);

// Feeds for every session input: `files` (input name -> .pb/.npy path) first, random data from
// `seed` for the rest (each input seeded by seed + its position). Errors name the input and
// file: a file whose dtype differs from the input's, or whose rank/static dims do not fit.
Result<std::map<std::string, Value>> prepareFeeds(
    const std::vector<Session::IoInfo>& inputs,
    const std::map<std::string, std::filesystem::path>& files, const SymbolBindings& symbols,
    std::uint64_t seed);

// Checks a value against a declared type: kind, dtype, rank, static dims. Empty when it fits.
std::string describeTypeMismatch(const Value& value, const onnx::TypeProto& type);

}  // namespace onnxlens::engine
