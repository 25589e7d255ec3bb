#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace onnxlens::engine {

using Shape = std::vector<std::int64_t>;

// Number of elements; throws EngineError when a dim is negative or the product overflows int64.
std::int64_t shapeElementCount(std::span<const std::int64_t> shape);
// The same count, nullopt instead of the error (for passes that skip what they cannot count).
std::optional<std::int64_t> checkedElementCount(std::span<const std::int64_t> shape);
// Row-major strides in elements.
std::vector<std::int64_t> shapeStrides(std::span<const std::int64_t> shape);
// "[2x3x4]" ("[]" for a scalar).
std::string shapeToString(std::span<const std::int64_t> shape);
// Numpy multidirectional broadcasting; throws EngineError naming both shapes when incompatible.
Shape broadcastShapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b);
// Normalizes a possibly negative axis against `rank`; throws when outside [-rank, rank).
std::int64_t normalizeAxis(std::int64_t axis, std::int64_t rank);

// Strides of `input` (right-aligned) when broadcast to `outputShape`: 0 on broadcast dims.
std::vector<std::int64_t> broadcastStrides(std::span<const std::int64_t> input,
                                           std::span<const std::int64_t> outputShape);

}  // namespace onnxlens::engine
