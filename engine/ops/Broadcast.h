#pragma once
// Numpy-style broadcasting of N inputs to one output, iterated as contiguous spans.
//
// The plan drops size-1 output dims and merges neighbouring dims that every input walks
// contiguously (or broadcasts over both), so the common cases (same shapes, a scalar operand,
// a per-channel operand) become a few long rows with inner stride 1 (walk) or 0 (repeat one
// element). Kernels then run a tight, vectorisable loop per row instead of computing an index
// per element.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

class BroadcastPlan {
  public:
    BroadcastPlan(std::initializer_list<const Shape*> inputs)
        : BroadcastPlan(std::vector<const Shape*>(inputs)) {}

    explicit BroadcastPlan(const std::vector<const Shape*>& inputs) : inputCount_(inputs.size()) {
        for (const Shape* s : inputs) outputShape_ = broadcastShapes(outputShape_, *s);
        numel_ = shapeElementCount(outputShape_);
        const std::size_t rank = outputShape_.size();

        // Per input, the stride of each output dim (0 where the input is broadcast).
        std::vector<std::vector<std::int64_t>> strides(inputCount_);
        for (std::size_t k = 0; k < inputCount_; ++k)
            strides[k] = broadcastStrides(*inputs[k], outputShape_);

        // Keep dims of size > 1, merging a dim into its outer neighbour when every input's
        // stride there equals (inner stride x inner size).
        for (std::size_t d = 0; d < rank; ++d) {
            const std::int64_t size = outputShape_[d];
            if (size == 1) continue;
            bool mergeable = !dims_.empty();
            for (std::size_t k = 0; k < inputCount_ && mergeable; ++k)
                mergeable = strides_[k].back() == strides[k][d] * size;
            if (mergeable) {
                dims_.back() *= size;
                for (std::size_t k = 0; k < inputCount_; ++k) strides_[k].back() = strides[k][d];
            } else {
                dims_.push_back(size);
                strides_.resize(inputCount_);
                for (std::size_t k = 0; k < inputCount_; ++k) strides_[k].push_back(strides[k][d]);
            }
        }
        if (dims_.empty()) {  // a scalar (or all-ones) output: one row of one element
            dims_.push_back(1);
            strides_.assign(inputCount_, std::vector<std::int64_t>{0});
        }
        innerSize_ = dims_.back();
    }

    const Shape& outputShape() const { return outputShape_; }
    std::int64_t numel() const { return numel_; }
    // Length of the contiguous rows the output is cut into.
    std::int64_t rowLength() const { return innerSize_; }

    // Calls fn(outOffset, count, inputOffsets, innerStrides) for consecutive spans covering the
    // output range [begin, end). Along a span, input k advances by innerStrides[k] (0 or 1)
    // per element from inputOffsets[k]. The arrays hold one entry per input.
    template <class Fn>
    void forEachSpan(std::int64_t begin, std::int64_t end, Fn&& fn) const {
        if (begin >= end) return;
        const std::size_t outer = dims_.size() - 1;
        std::vector<std::int64_t> index(outer, 0);
        std::vector<std::int64_t> rowOffsets(inputCount_, 0), offsets(inputCount_),
            inner(inputCount_);
        for (std::size_t k = 0; k < inputCount_; ++k) inner[k] = strides_[k].back();

        // Multi-index of the row holding `begin`.
        std::int64_t row = begin / innerSize_;
        std::int64_t pos = begin % innerSize_;
        for (std::size_t d = outer; d-- > 0;) {
            index[d] = row % dims_[d];
            row /= dims_[d];
            for (std::size_t k = 0; k < inputCount_; ++k)
                rowOffsets[k] += index[d] * strides_[k][d];
        }

        std::int64_t out = begin;
        while (out < end) {
            const std::int64_t count = std::min(innerSize_ - pos, end - out);
            for (std::size_t k = 0; k < inputCount_; ++k)
                offsets[k] = rowOffsets[k] + pos * inner[k];
            fn(out, count, offsets.data(), inner.data());
            out += count;
            pos = 0;
            // Odometer step to the next row.
            for (std::size_t d = outer; d-- > 0;) {
                for (std::size_t k = 0; k < inputCount_; ++k) rowOffsets[k] += strides_[k][d];
                if (++index[d] < dims_[d]) break;
                for (std::size_t k = 0; k < inputCount_; ++k)
                    rowOffsets[k] -= strides_[k][d] * dims_[d];
                index[d] = 0;
            }
        }
    }

    // Splits the output over the pool and calls forEachSpan on each chunk.
    template <class Fn>
    void parallelSpans(KernelContext& ctx, double costPerElement, Fn&& fn) const {
        ctx.pool().parallelFor(numel_, costPerElement, [&](std::int64_t begin, std::int64_t end) {
            forEachSpan(begin, end, fn);
        });
    }

  private:
    std::size_t inputCount_;
    Shape outputShape_;
    std::int64_t numel_ = 0;
    std::vector<std::int64_t> dims_;                  // merged output dims, innermost last
    std::vector<std::vector<std::int64_t>> strides_;  // [input][merged dim]
    std::int64_t innerSize_ = 1;
};

// One span of a binary operation: out[i] = op(a[i * sa], b[i * sb]) for strides 0 or 1, written
// as four loops so the compiler vectorises each.
template <class A, class B, class R, class Op>
inline void binarySpan(const A* a, std::int64_t sa, const B* b, std::int64_t sb, R* out,
                       std::int64_t n, const Op& op) {
    if (sa != 0 && sb != 0) {
        for (std::int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
    } else if (sa != 0) {
        const B bv = *b;
        for (std::int64_t i = 0; i < n; ++i) out[i] = op(a[i], bv);
    } else if (sb != 0) {
        const A av = *a;
        for (std::int64_t i = 0; i < n; ++i) out[i] = op(av, b[i]);
    } else {
        const R v = op(*a, *b);
        std::fill(out, out + n, v);
    }
}

// Broadcasts a and b to their common shape and fills a new R tensor with op(a, b) elementwise.
// `cost` is a rough per-element operation count for the thread pool.
template <class A, class B, class R, class Op>
Tensor broadcastBinary(KernelContext& ctx, const Tensor& a, const Tensor& b, double cost,
                       const Op& op) {
    // Equal shapes, or one side a single element of no higher rank (x + bias, x * 0.5): the
    // output has the other's shape and one flat span, without the plan's strides (its vectors
    // cost more than the operation on a small tensor).
    const bool aOne = a.numel() == 1 && a.rank() <= b.rank();
    const bool bOne = b.numel() == 1 && b.rank() <= a.rank();
    if (a.shape() == b.shape() || aOne || bOne) {
        const Shape& shape = bOne ? a.shape() : b.shape();
        Tensor out(dataTypeOf<R>, shape);
        const A* pa = a.data<A>();
        const B* pb = b.data<B>();
        R* po = out.data<R>();
        const std::int64_t sa = aOne && !bOne ? 0 : 1, sb = bOne ? 0 : 1;
        ctx.pool().parallelFor(out.numel(), cost, [&](std::int64_t begin, std::int64_t end) {
            binarySpan(pa + begin * sa, sa, pb + begin * sb, sb, po + begin, end - begin, op);
        });
        return out;
    }
    BroadcastPlan plan{&a.shape(), &b.shape()};
    Tensor out(dataTypeOf<R>, plan.outputShape());
    const A* pa = a.data<A>();
    const B* pb = b.data<B>();
    R* po = out.data<R>();
    plan.parallelSpans(
        ctx, cost,
        [&](std::int64_t o, std::int64_t n, const std::int64_t* off, const std::int64_t* inner) {
            binarySpan(pa + off[0], inner[0], pb + off[1], inner[1], po + o, n, op);
        });
    return out;
}

}  // namespace onnxlens::engine::ops
