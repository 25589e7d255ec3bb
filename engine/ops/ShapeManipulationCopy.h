#pragma once
// Data-movement helpers shared by the shape-manipulation and indexing kernels. They work on
// elements by size (dispatchBySize), so one instantiation serves every dtype of that width,
// strings included.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ByteTranspose.h"
#include "onnxlens/engine/DataType.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Shape.h"
#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops {

// Elements of a strided view: output element (i0, i1, ...) of `shape` (row-major) reads
// input element offset + sum(ik * strides[k]). Strides may be 0 (broadcast) or negative.
struct StridedView {
    Shape shape;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;
};

// Drops unit dims and merges neighbours that are contiguous in the input, so that the copy
// loops run over as few, as long rows as possible.
inline void coalesceView(StridedView& view) {
    Shape shape;
    std::vector<std::int64_t> strides;
    for (std::size_t d = 0; d < view.shape.size(); ++d) {
        if (view.shape[d] == 1) continue;
        if (!shape.empty() && strides.back() == view.strides[d] * view.shape[d]) {
            shape.back() *= view.shape[d];
            strides.back() = view.strides[d];
        } else {
            shape.push_back(view.shape[d]);
            strides.push_back(view.strides[d]);
        }
    }
    view.shape = std::move(shape);
    view.strides = std::move(strides);
}

namespace detail {

// out[b][j][i] = in[b][i][j] for a batch of rows x cols matrices stored with the strides of
// the view: tiles keep both the reads and the writes within cache lines.
template <class T>
void transposeTiles(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t inRowStride,
                    T* out) {
    constexpr std::int64_t kTile = 32;
    for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
        const std::int64_t r1 = std::min(rows, r0 + kTile);
        for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
            const std::int64_t c1 = std::min(cols, c0 + kTile);
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = c0; c < c1; ++c) out[r * cols + c] = in[c * inRowStride + r];
        }
    }
}

}  // namespace detail

// Copies the view into the contiguous buffer `out` (which holds shapeElementCount(view.shape)
// elements). Splits the rows over the pool when it is given and the copy is large.
template <class T>
void copyStridedView(const T* in, StridedView view, T* out, ThreadPool* pool) {
    const std::int64_t count = shapeElementCount(view.shape);
    if (count == 0) return;
    coalesceView(view);
    const std::size_t rank = view.shape.size();
    if (rank == 0) {
        out[0] = in[view.offset];
        return;
    }
    // A batch of 2-D transposes (the last two output dims read the input with strides
    // (1, rows)): tile it instead of reading a column per output row. Bytes go through
    // transposeBytes (16 x 16 blocks in registers) at any size: an 8-bit image moved to
    // channels-last has 3 columns.
    constexpr bool bytes = sizeof(T) == 1;
    if (rank >= 2 && view.strides[rank - 2] == 1 &&
        view.strides[rank - 1] == view.shape[rank - 2] &&
        (bytes || (view.shape[rank - 2] >= 8 && view.shape[rank - 1] >= 8))) {
        const std::int64_t rows = view.shape[rank - 2], cols = view.shape[rank - 1];
        const std::int64_t matrix = rows * cols;
        StridedView batch{Shape(view.shape.begin(), view.shape.end() - 2),
                          std::vector<std::int64_t>(view.strides.begin(), view.strides.end() - 2),
                          view.offset};
        const std::int64_t batches = shapeElementCount(batch.shape);
        auto run = [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t b = begin; b < end; ++b) {
                std::int64_t offset = batch.offset, rest = b;
                for (std::size_t d = batch.shape.size(); d-- > 0;) {
                    offset += (rest % batch.shape[d]) * batch.strides[d];
                    rest /= batch.shape[d];
                }
                if constexpr (bytes)
                    transposeBytes(reinterpret_cast<const std::uint8_t*>(in + offset), cols, rows,
                                   rows, reinterpret_cast<std::uint8_t*>(out + b * matrix), cols);
                else
                    detail::transposeTiles(in + offset, rows, cols, rows, out + b * matrix);
            }
        };
        if (pool)
            pool->parallelFor(batches, static_cast<double>(matrix), run);
        else
            run(0, batches);
        return;
    }

    const std::int64_t inner = view.shape[rank - 1];
    const std::int64_t innerStride = view.strides[rank - 1];
    const std::int64_t rows = count / inner;
    auto copyRows = [&](std::int64_t begin, std::int64_t end) {
        // Multi-index of row `begin` over the outer dims, then a running counter.
        std::vector<std::int64_t> index(rank - 1, 0);
        std::int64_t offset = view.offset, rest = begin;
        for (std::size_t d = rank - 1; d-- > 0;) {
            index[d] = rest % view.shape[d];
            offset += index[d] * view.strides[d];
            rest /= view.shape[d];
        }
        for (std::int64_t row = begin; row < end; ++row) {
            T* dst = out + row * inner;
            const T* src = in + offset;
            if (innerStride == 1) {
                std::copy(src, src + inner, dst);
            } else if (innerStride == 0) {
                std::fill(dst, dst + inner, *src);
            } else {
                for (std::int64_t i = 0; i < inner; ++i) dst[i] = src[i * innerStride];
            }
            for (std::size_t d = rank - 1; d-- > 0;) {
                offset += view.strides[d];
                if (++index[d] < view.shape[d]) break;
                offset -= index[d] * view.strides[d];
                index[d] = 0;
            }
        }
    };
    if (pool)
        pool->parallelFor(rows, static_cast<double>(inner), copyRows);
    else
        copyRows(0, rows);
}

// A new tensor of the input's dtype holding the view's elements.
inline Tensor copyStridedView(const Tensor& input, const StridedView& view, ThreadPool* pool) {
    Tensor out(input.dtype(), view.shape);
    dispatchBySize(input.dtype(), [&]<class U>() {
        copyStridedView(static_cast<const U*>(input.raw()), view, static_cast<U*>(out.raw()), pool);
    });
    return out;
}

// The index normalized into [0, size); negative indices count from the end. Throws an
// EngineError naming the index, the axis and its size otherwise.
inline std::int64_t normalizeIndex(std::int64_t index, std::int64_t size, std::int64_t axis) {
    const std::int64_t normalized = index < 0 ? index + size : index;
    if (normalized < 0 || normalized >= size)
        throw EngineError("index " + std::to_string(index) + " is out of range for axis " +
                          std::to_string(axis) + " of size " + std::to_string(size));
    return normalized;
}

// Size arithmetic on values read from tensors: throws instead of overflowing.
inline std::int64_t checkedAdd(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) throw EngineError(what + " overflows 64 bits");
    return sum;
}
inline std::int64_t checkedMultiply(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) throw EngineError(what + " overflows 64 bits");
    return product;
}
// An element count computed in floating point, as int64; throws when not finite or too large.
inline std::int64_t countFromFloating(long double value, const std::string& what) {
    if (!std::isfinite(value) || value >= 9.2e18L || value <= -9.2e18L)
        throw EngineError(what + " is not a representable count");
    return static_cast<std::int64_t>(value);
}

// Reads an index tensor (int32 or int64) as int64 values.
inline std::vector<std::int64_t> readIndices(const Tensor& indices, const char* what) {
    if (indices.dtype() != DataType::Int64 && indices.dtype() != DataType::Int32)
        throw EngineError(std::string(what) + " must be int32 or int64, got " +
                          dataTypeName(indices.dtype()));
    return indices.toInt64Vector();
}

}  // namespace onnxlens::engine::ops
