#pragma once
// Channel-blocked activations, the layout oneDNN's fast convolution and pooling kernels work in
// (nChw16c with AVX-512, nChw8c with AVX2): an [N, C, spatial...] tensor is stored as
// [N, ceil(C / b), spatial..., b], channel c at block c / b, lane c % b. Lanes past C are zero
// when written by toChannelBlocked; kernels never let them reach a real channel.
// The optimizer (convertToChannelBlockedLayout) keeps whole Conv/pool chains in this layout, so
// a CNN reorders once on the way in and once on the way out instead of around every node.
#include <cstdint>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops {

inline std::int64_t channelBlocks(std::int64_t channels, std::int64_t block) {
    return (channels + block - 1) / block;
}

// f.template operator()<B>() with B the block as a compile-time constant where it is one of
// the machine blocks (16, 8), 0 otherwise (the kernel then reads the block at run time).
template <class F>
void withStaticBlock(std::int64_t block, F&& f) {
    if (block == 16)
        f.template operator()<16>();
    else if (block == 8)
        f.template operator()<8>();
    else
        f.template operator()<0>();
}

// [N, C, spatial...] float -> [N, ceil(C/b), spatial..., b], zero-filled past C.
Tensor toChannelBlocked(ThreadPool& pool, const Tensor& plain, std::int64_t block);
// [N, Cb, spatial..., b] float -> [N, channels, spatial...]; channels <= Cb * b.
Tensor fromChannelBlocked(ThreadPool& pool, const Tensor& blocked, std::int64_t channels);
// The logical [N, channels, spatial...] shape of a blocked tensor (checks it is one).
Shape plainShapeOfBlocked(const Tensor& blocked, std::int64_t channels);

}  // namespace onnxlens::engine::ops
