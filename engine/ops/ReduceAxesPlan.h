#pragma once
// How to walk a tensor when reducing over a set of axes: every output element has a base offset
// into the input, and every reduced position an offset relative to that base. Shared by the
// Reduce* kernels and the normalizations that take statistics over axes.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

class ReduceAxesPlan {
  public:
    // `reduced[i]` says whether axis i is reduced.
    ReduceAxesPlan(const Shape& shape, const std::vector<bool>& reduced) {
        auto strides = shapeStrides(shape);
        outputCount_ = 1;
        reducedCount_ = 1;
        std::vector<std::int64_t> reducedSizes, reducedStrides;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            if (reduced[i]) {
                keepShape_.push_back(1);
                reducedCount_ *= shape[i];
                appendMerged(reducedSizes, reducedStrides, shape[i], strides[i]);
            } else {
                keepShape_.push_back(shape[i]);
                dropShape_.push_back(shape[i]);
                outputCount_ *= shape[i];
                appendMerged(keptSizes_, keptStrides_, shape[i], strides[i]);
            }
        }
        contiguous_ = reducedSizes.empty() || (reducedSizes.size() == 1 && reducedStrides[0] == 1);
        if (!contiguous_ && reducedCount_ > 0) {
            offsets_.resize(static_cast<std::size_t>(reducedCount_));
            std::vector<std::int64_t> index(reducedSizes.size(), 0);
            std::int64_t offset = 0;
            for (std::int64_t k = 0; k < reducedCount_; ++k) {
                offsets_[static_cast<std::size_t>(k)] = offset;
                for (std::size_t d = reducedSizes.size(); d-- > 0;) {
                    offset += reducedStrides[d];
                    if (++index[d] < reducedSizes[d]) break;
                    offset -= reducedStrides[d] * reducedSizes[d];
                    index[d] = 0;
                }
            }
        }
    }

    const Shape& keepDimsShape() const { return keepShape_; }
    const Shape& droppedDimsShape() const { return dropShape_; }
    std::int64_t outputCount() const { return outputCount_; }
    std::int64_t reducedCount() const { return reducedCount_; }

    // Calls fn(offset) for every reduced position relative to a base offset.
    template <class F>
    void forEachReduced(F&& fn) const {
        if (contiguous_) {
            for (std::int64_t k = 0; k < reducedCount_; ++k) fn(k);
        } else {
            for (std::int64_t offset : offsets_) fn(offset);
        }
    }

    // Calls fn(outputIndex, baseOffset) for the output elements in [begin, end).
    template <class F>
    void forEachOutput(std::int64_t begin, std::int64_t end, F&& fn) const {
        if (begin >= end) return;
        std::vector<std::int64_t> index(keptSizes_.size(), 0);
        std::int64_t base = 0, rest = begin;
        for (std::size_t d = keptSizes_.size(); d-- > 0;) {
            index[d] = rest % keptSizes_[d];
            rest /= keptSizes_[d];
            base += index[d] * keptStrides_[d];
        }
        for (std::int64_t o = begin; o < end; ++o) {
            fn(o, base);
            for (std::size_t d = keptSizes_.size(); d-- > 0;) {
                base += keptStrides_[d];
                if (++index[d] < keptSizes_[d]) break;
                base -= keptStrides_[d] * keptSizes_[d];
                index[d] = 0;
            }
        }
    }

  private:
    // Adjacent axes of the same kind whose strides chain merge into one loop.
    static void appendMerged(std::vector<std::int64_t>& sizes, std::vector<std::int64_t>& strides,
                             std::int64_t size, std::int64_t stride) {
        if (size == 1) return;
        if (!sizes.empty() && strides.back() == size * stride) {
            sizes.back() *= size;
            strides.back() = stride;
            return;
        }
        sizes.push_back(size);
        strides.push_back(stride);
    }

    Shape keepShape_, dropShape_;
    std::int64_t outputCount_ = 1, reducedCount_ = 1;
    std::vector<std::int64_t> keptSizes_, keptStrides_;
    std::vector<std::int64_t> offsets_;
    bool contiguous_ = true;
};

// The reduced-axis mask for `axes` (possibly negative) over `rank`; duplicates are an error.
inline std::vector<bool> reducedAxisMask(const std::vector<std::int64_t>& axes, std::int64_t rank) {
    std::vector<bool> mask(static_cast<std::size_t>(rank), false);
    for (std::int64_t axis : axes) {
        auto a = static_cast<std::size_t>(normalizeAxis(axis, rank));
        if (mask[a]) throw EngineError("axis " + std::to_string(axis) + " is repeated in axes");
        mask[a] = true;
    }
    return mask;
}

}  // namespace onnxlens::engine::ops
