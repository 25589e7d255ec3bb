#pragma once
// The weight layout of com.onnxlens PackedMatMul (the optimizer's pack-matmul-weights pass): the
// [K, N] weights B of a MatMul, stored as [ceil(N/b), ceil(K/b), b, b] with
//     packed[nb][kb][i][j] = B[kb * b + i][nb * b + j]   (zero past K or N),
// b the block (8 or 16). This is oneDNN's OIw8i8o / OIw16i16o layout of 1x1-convolution weights
// [N, K, 1]: the products then run on oneDNN's 1x1 convolution kernels with the weights used in
// place, never copied at run time (oneDNN's matmul on plain weights re-packs B on every call).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

inline Shape packedMatMulWeightShape(std::int64_t k, std::int64_t n, std::int64_t block) {
    return {(n + block - 1) / block, (k + block - 1) / block, block, block};
}

// B [K, N] (row-major floats at `src`, any alignment) -> the packed layout above at `dst`, whose
// packedMatMulWeightShape(k, n, block) floats must be zero already.
inline void packMatMulWeightsInto(const void* src, std::int64_t k, std::int64_t n,
                                  std::int64_t block, void* dst) {
    const auto* in = static_cast<const char*>(src);
    auto* out = static_cast<char*>(dst);
    const std::int64_t kBlocks = (k + block - 1) / block, nBlocks = (n + block - 1) / block;
    for (std::int64_t nb = 0; nb < nBlocks; ++nb)
        for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
            char* tile = out + (nb * kBlocks + kb) * block * block * 4;
            const std::int64_t rows = std::min(block, k - kb * block);
            const std::int64_t cols = std::min(block, n - nb * block);
            for (std::int64_t i = 0; i < rows; ++i)
                std::memcpy(tile + i * block * 4, in + ((kb * block + i) * n + nb * block) * 4,
                            static_cast<std::size_t>(cols) * 4);
        }
}

// B [K, N] float -> the packed layout above.
inline Tensor packMatMulWeights(const Tensor& b, std::int64_t block) {
    require(b.dtype() == DataType::Float && b.rank() == 2,
            "packed MatMul weights are 2-D float, got " + shapeToString(b.shape()));
    require(block == 8 || block == 16, "the packing block must be 8 or 16");
    const std::int64_t k = b.dim(0), n = b.dim(1);
    Tensor packed = Tensor::zeros(DataType::Float, packedMatMulWeightShape(k, n, block));
    packMatMulWeightsInto(b.data<float>(), k, n, block, packed.data<float>());
    return packed;
}

// The packed layout back to B [K, N] (the kernels' path without oneDNN).
inline Tensor unpackMatMulWeights(const Tensor& packed, std::int64_t k, std::int64_t n) {
    require(
        packed.dtype() == DataType::Float && packed.rank() == 4 && packed.dim(2) == packed.dim(3),
        "packed MatMul weights must be float [N/b, K/b, b, b], got " +
            shapeToString(packed.shape()));
    const std::int64_t block = packed.dim(2);
    require(k >= 1 && n >= 1 && packed.shape() == packedMatMulWeightShape(k, n, block),
            "packed MatMul weights " + shapeToString(packed.shape()) +
                " do not hold K = " + std::to_string(k) + ", N = " + std::to_string(n));
    Tensor b(DataType::Float, {k, n});
    const float* src = packed.data<float>();
    float* dst = b.data<float>();
    const std::int64_t kBlocks = (k + block - 1) / block, nBlocks = (n + block - 1) / block;
    for (std::int64_t nb = 0; nb < nBlocks; ++nb)
        for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
            const float* tile = src + (nb * kBlocks + kb) * block * block;
            const std::int64_t rows = std::min(block, k - kb * block);
            const std::int64_t cols = std::min(block, n - nb * block);
            for (std::int64_t i = 0; i < rows; ++i)
                std::copy_n(tile + i * block, cols, dst + (kb * block + i) * n + nb * block);
        }
    return b;
}

}  // namespace onnxlens::engine::ops
