#include "onnxlens/engine/Shape.h"

#include <limits>

#include "onnxlens/engine/EngineError.h"

namespace onnxlens::engine {

std::optional<std::int64_t> checkedElementCount(std::span<const std::int64_t> shape) {
    std::int64_t count = 1;
    for (std::int64_t d : shape) {
        if (d < 0 || (d != 0 && count > std::numeric_limits<std::int64_t>::max() / d))
            return std::nullopt;
        count *= d;
    }
    return count;
}

std::int64_t shapeElementCount(std::span<const std::int64_t> shape) {
    if (auto count = checkedElementCount(shape)) return *count;
    for (std::int64_t d : shape)
        if (d < 0) throw EngineError("negative dimension in shape " + shapeToString(shape));
    throw EngineError("shape " + shapeToString(shape) + " overflows a 64-bit element count");
}

std::vector<std::int64_t> shapeStrides(std::span<const std::int64_t> shape) {
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t s = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = s;
        s *= shape[i];
    }
    return strides;
}

std::string shapeToString(std::span<const std::int64_t> shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += "x";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

Shape broadcastShapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    std::size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da == db || db == 1) {
            out[i] = da;
        } else if (da == 1) {
            out[i] = db;
        } else {
            throw EngineError("shapes " + shapeToString(a) + " and " + shapeToString(b) +
                              " cannot be broadcast");
        }
    }
    return out;
}

std::int64_t normalizeAxis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0 && axis != -1))
        throw EngineError("axis " + std::to_string(axis) + " is out of range for rank " +
                          std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<std::int64_t> broadcastStrides(std::span<const std::int64_t> input,
                                           std::span<const std::int64_t> outputShape) {
    std::vector<std::int64_t> strides(outputShape.size(), 0);
    auto own = shapeStrides(input);
    std::size_t offset = outputShape.size() - input.size();
    for (std::size_t i = 0; i < input.size(); ++i) strides[offset + i] = input[i] == 1 ? 0 : own[i];
    return strides;
}

}  // namespace onnxlens::engine
