#pragma once
// 8-bit matrix products on oneDNN's int8 matmul primitive (u8/s8 activations x s8 weights with
// int32 accumulation: the VNNI kernels on processors that have them), for MatMulInteger and the
// com.onnxlens MatMulIntegerToFloat fusion of what dynamic quantizers write.
//
// The weights are constant in quantized models (initializers): they are reordered once into the
// layout oneDNN's kernels read and kept while the same weight buffer comes back, as the float
// convolutions do. Products of at most four rows (a decoder's token, a classifier's head) run on a
// column kernel of the engine's own instead (int16 multiply-adds, exact on every processor),
// which reads a column-major copy of the weights made once.
#include <cstdint>
#include <memory>

#include "DnnlMatMul.h"
#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops {

// What happens to the int32 accumulators before they are written as float:
// y = float(acc) * scale + bias, scale one value or one per column, bias one per column or null.
struct Int8MatMulEpilogue {
    const float* scale = nullptr;
    std::int64_t scaleCount = 1;
    const float* bias = nullptr;
};

class DnnlInt8MatMul {
  public:
    DnnlInt8MatMul();
    ~DnnlInt8MatMul();
    DnnlInt8MatMul(const DnnlInt8MatMul&) = delete;
    DnnlInt8MatMul& operator=(const DnnlInt8MatMul&) = delete;

    // (a - aZeroPoint) x b for a uint8/int8 [..., M, K] and b int8 [K, N] (zero point 0), into y
    // [..., M, N]: int32 accumulators when `epilogue` is null, else float through the epilogue.
    // Returns false, having done nothing, when the build has no oneDNN or the operands are not of
    // that form (the caller then computes it itself).
    bool run(ThreadPool& pool, const Tensor& a, std::int32_t aZeroPoint, const Tensor& b,
             const Int8MatMulEpilogue* epilogue, Tensor& y);

  private:
    // Products of few rows, on a column kernel exact on every processor (under the lock).
    bool runFewRows(ThreadPool& pool, const Tensor& a, std::int32_t aZeroPoint, const Tensor& b,
                    const Int8MatMulEpilogue* epilogue, Tensor& y);

    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace onnxlens::engine::ops
