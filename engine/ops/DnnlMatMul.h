#pragma once
// Float matrix products on oneDNN's matmul primitive (when the build has oneDNN): MatMul, the
// fused MatMul + bias (+ GELU) of the transformer fusions, and Gemm's common Linear form.
//
// On this machine (AVX-512) oneDNN's brgemm kernels run BERT-base's [128 x 768] x [768 x 3072]
// products at 110-200 GFLOP/s on one thread where Eigen's GEMM reaches 35-75 (a stand-alone
// comparison of the two on the same buffers). Weights stay in their plain row-major layout: the
// brgemm kernels measured as fast on plain weights as on reordered ones, so no second copy of
// the weights is kept.
#include <cstdint>
#include <memory>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

enum class MatMulActivation { None, Gelu };

class DnnlMatMul {
  public:
    DnnlMatMul();
    ~DnnlMatMul();
    DnnlMatMul(const DnnlMatMul&) = delete;
    DnnlMatMul& operator=(const DnnlMatMul&) = delete;

    // y = activation(alpha * op(a) x op(b) + bias) for float tensors a [..., M, K] and b
    // [..., K, N] (ranks 2 to 6, batch dims broadcasting numpy-style; op() swaps the last two
    // dims when transA/transB), bias N floats or null, y already allocated with the product's
    // shape. Returns false, having done nothing, when the build has no oneDNN, the problem is too
    // small to gain from it, or alpha != 1 comes with a bias (the caller then computes it itself).
    bool run(const Tensor& a, const Tensor& b, const float* bias, MatMulActivation activation,
             Tensor& y, bool transA = false, bool transB = false, float alpha = 1.0f);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace onnxlens::engine::ops
