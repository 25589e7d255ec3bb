#pragma once
// The exact 8-bit products of the dynamically quantized operators (com.microsoft
// DynamicQuantizeMatMul and QGemm in MsQuantizedMatMulOps.cpp, DynamicQuantizeLSTM in
// MsDynamicQuantizeLstmOps.cpp): a float operand quantized to uint8 per tensor with
// DynamicQuantizeLinear's parameters, and the int32 product of two 8-bit operands with their zero
// points taken off exactly.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "DnnlInt8MatMul.h"
#include "Quantized8Simd.h"
#include "onnxlens/engine/Tensor.h"
#include "onnxlens/engine/ThreadPool.h"

namespace onnxlens::engine::ops {

// uint8 quantization of a float operand: q = saturate(round_half_even(v / scale) + zeroPoint).
struct UInt8Quantization {
    float scale = 1.0f;
    float zeroPoint = 0.0f;
};

// Widens [low, high] (which holds 0) to hold `count` values; NaN is ignored.
inline void widenRangeWithZero(const float* values, std::int64_t count, float& low, float& high) {
    for (std::int64_t i = 0; i < count; ++i) {
        low = values[i] < low ? values[i] : low;
        high = values[i] > high ? values[i] : high;
    }
}

// The parameters that map [low, high] (low <= 0 <= high) onto [0, 255]: scale (high - low) / 255
// (1 when the range is empty), zero point -low / scale rounded half to even.
inline UInt8Quantization uint8QuantizationOf(float low, float high) {
    UInt8Quantization q;
    q.scale = high == low ? 1.0f : (high - low) / 255.0f;
    const float zero = std::nearbyint(std::clamp(0.0f - low / q.scale, 0.0f, 255.0f));
    q.zeroPoint = zero >= 0.0f ? zero : 0.0f;  // an infinite range gives NaN: 0
    return q;
}

// The longest K whose int32 sums of (a - aZero)(b - bZero) cannot overflow: each term is at most
// 255 * 255 in magnitude.
inline constexpr std::int64_t kMaxExactInt8ProductDepth = 2147483647 / (255 * 255);

// int32 [rows, N] = (a - aZero) x (b - bZero[n]) exactly (K <= kMaxExactInt8ProductDepth), a
// uint8/int8 [rows, K] contiguous, b uint8/int8 [K, N], bZero one value or one per column. Int8 b
// runs on oneDNN's int8 kernels (DnnlInt8MatMul, which keeps b's reordered copy while the same b
// comes back), b's zero points taken off afterwards; uint8 b on an int32 GEMM.
inline Tensor integerProduct(ThreadPool& pool, DnnlInt8MatMul& dnnl, const Tensor& a,
                             std::int32_t aZero, const Tensor& b,
                             const std::vector<std::int32_t>& bZero) {
    using Int32Matrix =
        Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const std::int64_t rows = a.dim(0), k = a.dim(1), n = b.dim(1);
    Tensor y(DataType::Int32, {rows, n});
    if (rows == 0 || n == 0) return y;
    auto zb = [&](std::int64_t c) {
        return bZero[bZero.size() == 1 ? 0 : static_cast<std::size_t>(c)];
    };
    if (k > 0 && b.dtype() == DataType::Int8 && dnnl.run(pool, a, aZero, b, nullptr, y)) {
        // sum((a - za)(b - zb)) = sum((a - za) b) - zb sum(a - za)
        bool anyZero = false;
        for (std::int32_t z : bZero) anyZero = anyZero || z != 0;
        if (!anyZero) return y;
        std::int32_t* out = y.data<std::int32_t>();
        for (std::int64_t r = 0; r < rows; ++r) {
            std::int64_t sum = 0;
            for (std::int64_t i = 0; i < k; ++i) sum += a.valueAsInt64(r * k + i) - aZero;
            for (std::int64_t c = 0; c < n; ++c)
                out[r * n + c] -= static_cast<std::int32_t>(zb(c) * sum);
        }
        return y;
    }
    Int32Matrix am(rows, k), bm(k, n);
    for (std::int64_t i = 0; i < rows * k; ++i)
        am.data()[i] = static_cast<std::int32_t>(a.valueAsInt64(i)) - aZero;
    for (std::int64_t i = 0; i < k * n; ++i)
        bm.data()[i] = static_cast<std::int32_t>(b.valueAsInt64(i)) - zb(i % n);
    Eigen::Map<Int32Matrix> ym(y.data<std::int32_t>(), rows, n);
    const double cost = 2.0 * static_cast<double>(k * n);
    pool.parallelFor(rows, cost, [&](std::int64_t r0, std::int64_t r1) {
        ym.middleRows(r0, r1 - r0).noalias() = am.middleRows(r0, r1 - r0) * bm;
    });
    return y;
}

}  // namespace onnxlens::engine::ops
