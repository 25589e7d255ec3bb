// The attention core of the com.microsoft attention operators (see MsAttentionCore.h).
// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's GEMM packing (as in MatMulOps).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "MsAttentionCore.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "SubnormalFreeMath.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRows = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using Rows = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

// Scores kept per block of query rows: at most this many floats per thread (about 1 MB).
constexpr std::int64_t kScoreBlockFloats = 1 << 18;

struct KeyRange {
    std::int64_t lo, hi;
};

KeyRange keyRange(const AttentionCoreProblem& p, std::int64_t b, std::int64_t s) {
    const auto bi = static_cast<std::size_t>(b);
    std::int64_t hi = p.keyCount[bi];
    if (p.causal) hi = std::min(hi, p.causalOffset[bi] + s + 1);
    hi = std::max<std::int64_t>(hi, 0);
    const std::int64_t lo = p.window > 0 ? std::max<std::int64_t>(0, hi - p.window) : 0;
    return {lo, hi};
}

// Scores of one query row on [lo, hi) -> probabilities there, 0 elsewhere in [0, columns).
void scoreRow(const AttentionCoreProblem& p, float* r, std::int64_t columns, std::int64_t b,
              std::int64_t h, std::int64_t s, KeyRange range, float* qkRow) {
    const std::int64_t lo = range.lo, hi = range.hi;
    if (p.softcap > 0)
        for (std::int64_t j = lo; j < hi; ++j) r[j] = p.softcap * std::tanh(r[j] / p.softcap);
    if (p.mask) {
        const float* m = p.mask + b * p.maskBatch + s * p.maskRow;
        for (std::int64_t j = lo; j < hi; ++j) r[j] += m[j];
    }
    if (p.bias) {
        const float* a = p.bias + b * p.biasBatch + h * p.biasHead + s * p.biasRow;
        for (std::int64_t j = lo; j < hi; ++j) r[j] += a[j];
    }
    if (qkRow && p.qkMode == 1) {
        std::fill(qkRow, qkRow + p.qkColumns, p.qkOutside);
        std::copy(r + lo, r + hi, qkRow + lo);
    }
    if (hi > lo) {
        Eigen::Map<Eigen::ArrayXf> x(r + lo, hi - lo);
        const bool sink = p.smoothSoftmax || p.headSink;
        const float sinkValue = p.headSink ? p.headSink[h] : 0.0f;
        float highest = x.maxCoeff();
        if (sink) highest = std::max(highest, sinkValue);
        x = (x - highest).unaryExpr(ExpWithoutSubnormals{});
        float sum = x.sum();
        if (sink) sum += std::exp(sinkValue - highest);
        x *= 1.0f / sum;
    }
    std::fill(r, r + std::min(lo, columns), 0.0f);
    if (hi < columns) std::fill(r + hi, r + columns, 0.0f);
    if (qkRow && p.qkMode == 2) {
        std::fill(qkRow, qkRow + p.qkColumns, 0.0f);
        std::copy(r + lo, r + hi, qkRow + lo);
    }
}

}  // namespace

void runAttentionCore(KernelContext& ctx, const AttentionCoreProblem& p) {
    if (p.batch == 0 || p.heads == 0 || p.queries == 0) return;
    const std::int64_t group = p.heads / p.kvHeads;
    std::int64_t widest = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
        widest = std::max(widest, keyRange(p, b, p.queries - 1).hi);
    const std::int64_t blockRows = std::clamp<std::int64_t>(
        kScoreBlockFloats / std::max<std::int64_t>(widest, 1), 1, p.queries);
    const double cost = 2.0 * static_cast<double>(p.queries) * static_cast<double>(widest) *
                        static_cast<double>(p.headSize + p.vHeadSize + 8);
    // Each row of scores starts on a 64-byte boundary: Eigen's vectorized loops over a row
    // (exp, sum) peel off a scalar head up to the first aligned packet, and a scalar exp or a
    // regrouped sum differs in the last bits. On memory whose alignment depended on the heap (a
    // std::vector), the same inputs gave run-to-run different probabilities.
    constexpr std::int64_t kRowAlignFloats = 64 / sizeof(float);
    const std::int64_t stride = (std::max<std::int64_t>(widest, 1) + kRowAlignFloats - 1) /
                                kRowAlignFloats * kRowAlignFloats;
    ctx.pool().parallelFor(p.batch * p.heads, cost, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> storage(static_cast<std::size_t>(blockRows * stride + kRowAlignFloats));
        float* const scratch =
            storage.data() + (kRowAlignFloats - reinterpret_cast<std::uintptr_t>(storage.data()) /
                                                    sizeof(float) % kRowAlignFloats) %
                                 kRowAlignFloats;
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t b = item / p.heads, h = item % p.heads, kvh = h / group;
            for (std::int64_t s0 = 0; s0 < p.queries; s0 += blockRows) {
                const std::int64_t rows = std::min(blockRows, p.queries - s0);
                const std::int64_t columns = keyRange(p, b, s0 + rows - 1).hi;
                Rows out(p.out + b * p.outBatch + h * p.outHead + s0 * p.outRow, rows, p.vHeadSize,
                         Eigen::OuterStride<>(p.outRow));
                if (columns == 0) {
                    out.setZero();
                    for (std::int64_t i = 0; i < rows && p.qk; ++i) {
                        float* qkRow =
                            p.qk + ((b * p.heads + h) * p.queries + s0 + i) * p.qkColumns;
                        std::fill(qkRow, qkRow + p.qkColumns, p.qkMode == 1 ? p.qkOutside : 0.0f);
                    }
                    continue;
                }
                Rows scores(scratch, rows, columns, Eigen::OuterStride<>(stride));
                ConstRows q(p.q.at(b, h, s0), rows, p.headSize, Eigen::OuterStride<>(p.q.row));
                ConstRows k(p.k.at(b, kvh, 0), columns, p.headSize, Eigen::OuterStride<>(p.k.row));
                ConstRows v(p.v.at(b, kvh, 0), columns, p.vHeadSize, Eigen::OuterStride<>(p.v.row));
                scores.noalias() = q * k.transpose();
                scores *= p.scale;
                for (std::int64_t i = 0; i < rows; ++i) {
                    const std::int64_t s = s0 + i;
                    float* qkRow =
                        p.qk ? p.qk + ((b * p.heads + h) * p.queries + s) * p.qkColumns : nullptr;
                    scoreRow(p, scratch + i * stride, columns, b, h, s, keyRange(p, b, s), qkRow);
                }
                out.noalias() = scores * v;
            }
        }
    });
}

void rotateRow(float* row, const float* cosines, const float* sines, std::int64_t rotaryDim,
               bool interleaved) {
    const std::int64_t half = rotaryDim / 2;
    if (interleaved) {
        for (std::int64_t i = 0; i < half; ++i) {
            const float x1 = row[2 * i], x2 = row[2 * i + 1];
            row[2 * i] = x1 * cosines[i] - x2 * sines[i];
            row[2 * i + 1] = x1 * sines[i] + x2 * cosines[i];
        }
        return;
    }
    for (std::int64_t i = 0; i < half; ++i) {
        const float x1 = row[i], x2 = row[i + half];
        row[i] = x1 * cosines[i] - x2 * sines[i];
        row[i + half] = x1 * sines[i] + x2 * cosines[i];
    }
}

void requireAttentionFloat(const Tensor& t, const ValueName& what) {
    const DataType d = t.dtype();
    require(d == DataType::Float || d == DataType::Float16 || d == DataType::BFloat16, [&] {
        return what.text() + " must be float, float16 or bfloat16, got " + dataTypeName(d);
    });
}

Tensor asFloat(const Tensor& t) {
    return t.dtype() == DataType::Float ? t : t.castTo(DataType::Float);
}

void requireCountable(const Tensor& t, const ValueName& what) {
    std::int64_t product = 1;
    for (std::int64_t d : t.shape())
        if (d != 0 && __builtin_mul_overflow(product, d, &product))
            throw EngineError(what.text() + " of shape " + shapeToString(t.shape()) +
                              " has dimensions whose product overflows 64 bits");
}

void requireCountable(std::initializer_list<std::pair<const Tensor*, const char*>> tensors,
                      const char* op) {
    for (const auto& [t, name] : tensors)
        if (t) requireCountable(*t, ValueName{op, name});
}

std::int64_t checkedSum(std::int64_t a, std::int64_t b, const ValueName& what) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) throw EngineError(what.text() + " overflows 64 bits");
    return sum;
}

void denseRows(const float* a, const float* w, const float* bias, float* c, std::int64_t rows,
               std::int64_t k, std::int64_t n) {
    Eigen::Map<RowMatrix> out(c, rows, n);
    if (k == 0)
        out.setZero();
    else
        out.noalias() =
            Eigen::Map<const RowMatrix>(a, rows, k) * Eigen::Map<const RowMatrix>(w, k, n);
    if (bias) out.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, n);
}

}  // namespace onnxlens::engine::ops
