#pragma once
// com.onnxlens PackedMatMul's product on oneDNN: [rows, K] x B + bias (+ GELU), B in the packed
// layout of PackedMatMulWeights.h, computed as a 1x1 convolution over `rows` positions in nwc
// layout (A and Y are then exactly the row-major matrices). oneDNN's jit 1x1 kernels take the
// packed weights in place; its matmul primitive on plain weights (gemm:jit with AVX2) packs B on
// every call: a [16 x 384] x [384 x 1536] product took 0.94 ms there against 0.44 ms here, a
// [128 x 768] x [768 x 3072] one 30 ms against 12 ms (1 thread, stand-alone comparison).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "DnnlMatMul.h"
#include "PackedMatMulWeights.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine {
class ThreadPool;
}

namespace onnxlens::engine::ops {

// The packing blocks of [K, N] weights that oneDNN's fastest 1x1 convolution on this processor
// reads in place (oneDNN 2.6 on AVX-512: its brgemm kernels' Owi48o for most shapes), or
// fallbackBlock x fallbackBlock when it prefers no layout PackedMatMulWeights.h has (or the build
// has no oneDNN). On AVX-512 the brgemm kernels ran BERT-base's [128 x 768] x [768 x 3072]
// product in 3.2 ms against 5.7 ms for the jit_1x1 kernel on OIw16i16o (1 thread).
PackedMatMulBlocks preferredPackedMatMulBlocks(std::int64_t k, std::int64_t n,
                                               std::int64_t fallbackBlock);

class DnnlPackedMatMul {
  public:
    DnnlPackedMatMul();
    ~DnnlPackedMatMul();
    DnnlPackedMatMul(const DnnlPackedMatMul&) = delete;
    DnnlPackedMatMul& operator=(const DnnlPackedMatMul&) = delete;

    // y [rows, n] = activation(a [rows, k] x B + bias), B in a packed layout (the tensor
    // `packed`, held while its buffer comes back), bias n floats or null. Returns false, having
    // done nothing, when the build has no oneDNN or oneDNN takes no such convolution. With a
    // `pool` of several threads and few rows, each thread computes a range of Y's columns.
    bool run(const float* a, std::int64_t rows, std::int64_t k, std::int64_t n,
             const Tensor& packed, const float* bias, MatMulActivation activation, float* y,
             ThreadPool* pool = nullptr);

    // oneDNN's names of the kernels that computed the last product run here, one per slice of
    // columns (one for an unsplit product), e.g. "brgconv_1x1:avx512_core"; empty before the
    // first. Never oneDNN's reference code: run() takes another layout or returns false.
    std::vector<std::string> lastImplementations() const;

  private:
    struct State;
    // The few-rows product split by columns over the pool's threads; false when it does not
    // apply (one thread, small work, many rows, weights oneDNN wants in another layout).
    bool runColumnSlices(const float* a, std::int64_t rows, std::int64_t k, std::int64_t n,
                         const Tensor& packed, const float* bias, MatMulActivation activation,
                         float* y, ThreadPool* pool, double flops);
    std::unique_ptr<State> state_;
};

}  // namespace onnxlens::engine::ops
