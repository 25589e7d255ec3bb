#pragma once
// The weight layout of com.onnxlens PackedMatMul (the optimizer's pack-matmul-weights pass): the
// [K, N] weights B of a MatMul, stored as [ceil(N/bn), ceil(K/bk), bk, bn] with
//     packed[nb][kb][i][j] = B[kb * bk + i][nb * bn + j]   (zero past K or N),
// (bk, bn) the blocks along K and N. These are layouts of oneDNN's 1x1-convolution weights
// [N, K, 1]: bk = bn = 8 or 16 is OIw8i8o / OIw16i16o (its jit_1x1 kernels, AVX2 and AVX-512);
// bk = 1 with bn = 16, 32, 48 or 64 is Owi16o ... Owi64o (its brgemm 1x1 kernels on AVX-512,
// which read only the block they chose). The products then run on oneDNN's 1x1 convolution
// kernels with the weights used in place, never copied at run time (oneDNN's matmul on plain
// weights re-packs B on every call).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

// The blocks of the packed layout along K and N.
struct PackedMatMulBlocks {
    std::int64_t k = 16, n = 16;
    bool operator==(const PackedMatMulBlocks&) const = default;
};

// Every packed layout the kernels read: OIw8i8o, OIw16i16o, then Owi16o ... Owi64o.
inline constexpr PackedMatMulBlocks kPackedMatMulLayouts[] = {{8, 8},  {16, 16}, {1, 16},
                                                              {1, 32}, {1, 48},  {1, 64}};

inline bool isPackedMatMulLayout(PackedMatMulBlocks b) {
    return std::find(std::begin(kPackedMatMulLayouts), std::end(kPackedMatMulLayouts), b) !=
           std::end(kPackedMatMulLayouts);
}

inline Shape packedMatMulWeightShape(std::int64_t k, std::int64_t n, PackedMatMulBlocks b) {
    return {(n + b.n - 1) / b.n, (k + b.k - 1) / b.k, b.k, b.n};
}

// The blocks of packed weights of `shape` holding K x N, or nothing when it is no such layout.
inline std::optional<PackedMatMulBlocks> packedMatMulBlocksOf(const Shape& shape, std::int64_t k,
                                                              std::int64_t n) {
    if (shape.size() != 4 || k < 1 || n < 1) return std::nullopt;
    const PackedMatMulBlocks b{shape[2], shape[3]};
    if (!isPackedMatMulLayout(b) || shape != packedMatMulWeightShape(k, n, b)) return std::nullopt;
    return b;
}

// B [K, N] (row-major floats at `src`, any alignment) -> the packed layout above at `dst`, whose
// packedMatMulWeightShape(k, n, blocks) floats must be zero already.
inline void packMatMulWeightsInto(const void* src, std::int64_t k, std::int64_t n,
                                  PackedMatMulBlocks blocks, void* dst) {
    const auto* in = static_cast<const char*>(src);
    auto* out = static_cast<char*>(dst);
    const std::int64_t bk = blocks.k, bn = blocks.n;
    const std::int64_t kBlocks = (k + bk - 1) / bk, nBlocks = (n + bn - 1) / bn;
    for (std::int64_t nb = 0; nb < nBlocks; ++nb)
        for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
            char* tile = out + (nb * kBlocks + kb) * bk * bn * 4;
            const std::int64_t rows = std::min(bk, k - kb * bk);
            const std::int64_t cols = std::min(bn, n - nb * bn);
            for (std::int64_t i = 0; i < rows; ++i)
                std::memcpy(tile + i * bn * 4, in + ((kb * bk + i) * n + nb * bn) * 4,
                            static_cast<std::size_t>(cols) * 4);
        }
}

// B [K, N] float -> the packed layout above.
inline Tensor packMatMulWeights(const Tensor& b, PackedMatMulBlocks blocks) {
    require(b.dtype() == DataType::Float && b.rank() == 2,
            [&] { return "packed MatMul weights are 2-D float, got " + shapeToString(b.shape()); });
    require(isPackedMatMulLayout(blocks), [&] {
        return "the packing blocks must be 8 x 8, 16 x 16 or 1 x 16/32/48/64, got " +
               std::to_string(blocks.k) + " x " + std::to_string(blocks.n);
    });
    const std::int64_t k = b.dim(0), n = b.dim(1);
    Tensor packed = Tensor::zeros(DataType::Float, packedMatMulWeightShape(k, n, blocks));
    packMatMulWeightsInto(b.data<float>(), k, n, blocks, packed.data<float>());
    return packed;
}

// The packed layout back to B [K, N] (the kernels' path without oneDNN).
inline Tensor unpackMatMulWeights(const Tensor& packed, std::int64_t k, std::int64_t n) {
    const auto blocks = packed.dtype() == DataType::Float
                            ? packedMatMulBlocksOf(packed.shape(), k, n)
                            : std::nullopt;
    require(blocks.has_value(), [&] {
        return "packed MatMul weights " + shapeToString(packed.shape()) +
               " do not hold K = " + std::to_string(k) + ", N = " + std::to_string(n);
    });
    const std::int64_t bk = blocks->k, bn = blocks->n;
    Tensor b(DataType::Float, {k, n});
    const float* src = packed.data<float>();
    float* dst = b.data<float>();
    const std::int64_t kBlocks = (k + bk - 1) / bk, nBlocks = (n + bn - 1) / bn;
    for (std::int64_t nb = 0; nb < nBlocks; ++nb)
        for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
            const float* tile = src + (nb * kBlocks + kb) * bk * bn;
            const std::int64_t rows = std::min(bk, k - kb * bk);
            const std::int64_t cols = std::min(bn, n - nb * bn);
            for (std::int64_t i = 0; i < rows; ++i)
                std::copy_n(tile + i * bn, cols, dst + (kb * bk + i) * n + nb * bn);
        }
    return b;
}

// The packed weights unpacked to B [K, N] once, kept while the same packed buffer comes back
// (the kernels' path without oneDNN).
class UnpackedMatMulWeights {
  public:
    Tensor of(const Tensor& packed, std::int64_t k, std::int64_t n) {
        std::lock_guard lock(mutex_);
        if (!plain_.defined() || !packed.sharesStorageWith(held_)) {
            plain_ = unpackMatMulWeights(packed, k, n);
            held_ = packed;
        }
        return plain_;
    }

  private:
    std::mutex mutex_;
    Tensor plain_, held_;
};

}  // namespace onnxlens::engine::ops
