#pragma once
// Double-precision references for the tests of the com.microsoft attention operators
// (MultiHeadAttention, Attention, GroupQueryAttention, RotaryEmbedding): naive loops, written
// from the operators' documented semantics, independent of the engine's kernels.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing::msattention {

inline constexpr const char* kMsDomain = "com.microsoft";

// Deterministic values in [-1, 1) that are not small integers.
inline std::vector<double> wave(std::int64_t count, double phase, double amplitude = 1.0) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = amplitude * std::sin(0.61 * static_cast<double>(i) + phase);
    return v;
}

inline Tensor floatTensor(Shape shape, const std::vector<double>& values) {
    return makeTensor<float>(std::move(shape), std::vector<float>(values.begin(), values.end()));
}

inline Tensor int32Tensor(Shape shape, std::vector<std::int32_t> values) {
    return makeTensor<std::int32_t>(std::move(shape), std::move(values));
}

// A [rows, cols] double matrix view helper: element (r, c) of row-major storage.
inline double& at(std::vector<double>& v, std::int64_t cols, std::int64_t r, std::int64_t c) {
    return v[static_cast<std::size_t>(r * cols + c)];
}

// Rotary rotation of one head row (halves or interleaved pairs) by cos/sin rows of `half`.
inline void rotate(double* x, const double* cosRow, const double* sinRow, std::int64_t half,
                   bool interleaved) {
    for (std::int64_t i = 0; i < half; ++i) {
        const std::int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
        const double x1 = x[a], x2 = x[b];
        x[a] = x1 * cosRow[i] - x2 * sinRow[i];
        x[b] = x1 * sinRow[i] + x2 * cosRow[i];
    }
}

// One attention problem in double: q [B, N, S, H], k [B, KV, T, H], v [B, KV, T, Hv] (BNSH),
// query head h reading key/value head h / (N / KV). `visible(b, h, s, j)` says whether key j
// takes part at all; `additive(b, h, s, j)` is added to the (softcapped) scaled score. With a
// sink (smooth softmax: 0, head sink: sink[h]) the denominator gains exp(sink). Returns the
// output [B, S, N, Hv]; `probabilities` (when given) receives [B, N, S, T].
struct ReferenceProblem {
    std::int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0, headSize = 0,
                 vHeadSize = 0;
    std::vector<double> q, k, v;
    double scale = 1.0, softcap = 0.0;
    std::function<bool(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> visible;
    std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)> additive;
    bool smooth = false;
    std::vector<double> sink;  // per head, or empty
};

inline std::vector<double> referenceAttention(const ReferenceProblem& p,
                                              std::vector<double>* probabilities = nullptr,
                                              std::vector<double>* preSoftmax = nullptr) {
    std::vector<double> out(static_cast<std::size_t>(p.batch * p.queries * p.heads * p.vHeadSize),
                            0.0);
    if (probabilities)
        probabilities->assign(static_cast<std::size_t>(p.batch * p.heads * p.queries * p.keys),
                              0.0);
    if (preSoftmax)
        preSoftmax->assign(static_cast<std::size_t>(p.batch * p.heads * p.queries * p.keys), 0.0);
    const std::int64_t group = p.heads / p.kvHeads;
    for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t h = 0; h < p.heads; ++h)
            for (std::int64_t s = 0; s < p.queries; ++s) {
                const std::int64_t kvh = h / group;
                std::vector<double> score(static_cast<std::size_t>(p.keys), 0.0);
                std::vector<bool> on(static_cast<std::size_t>(p.keys), false);
                double highest = -INFINITY;
                for (std::int64_t j = 0; j < p.keys; ++j) {
                    if (p.visible && !p.visible(b, h, s, j)) continue;
                    double dot = 0;
                    for (std::int64_t d = 0; d < p.headSize; ++d)
                        dot += p.q[static_cast<std::size_t>(
                                   ((b * p.heads + h) * p.queries + s) * p.headSize + d)] *
                               p.k[static_cast<std::size_t>(
                                   ((b * p.kvHeads + kvh) * p.keys + j) * p.headSize + d)];
                    double x = dot * p.scale;
                    if (p.softcap > 0) x = p.softcap * std::tanh(x / p.softcap);
                    if (p.additive) x += p.additive(b, h, s, j);
                    score[static_cast<std::size_t>(j)] = x;
                    on[static_cast<std::size_t>(j)] = true;
                    highest = std::max(highest, x);
                    if (preSoftmax)
                        (*preSoftmax)[static_cast<std::size_t>(
                            ((b * p.heads + h) * p.queries + s) * p.keys + j)] = x;
                }
                const bool hasSink = p.smooth || !p.sink.empty();
                const double sinkValue = p.sink.empty() ? 0.0 : p.sink[static_cast<std::size_t>(h)];
                if (hasSink) highest = std::max(highest, sinkValue);
                double sum = hasSink ? std::exp(sinkValue - highest) : 0.0;
                for (std::int64_t j = 0; j < p.keys; ++j)
                    if (on[static_cast<std::size_t>(j)])
                        sum += std::exp(score[static_cast<std::size_t>(j)] - highest);
                for (std::int64_t j = 0; j < p.keys; ++j) {
                    if (!on[static_cast<std::size_t>(j)]) continue;
                    const double w = std::exp(score[static_cast<std::size_t>(j)] - highest) / sum;
                    if (probabilities)
                        (*probabilities)[static_cast<std::size_t>(
                            ((b * p.heads + h) * p.queries + s) * p.keys + j)] = w;
                    for (std::int64_t d = 0; d < p.vHeadSize; ++d)
                        out[static_cast<std::size_t>(
                            ((b * p.queries + s) * p.heads + h) * p.vHeadSize + d)] +=
                            w * p.v[static_cast<std::size_t>(
                                    ((b * p.kvHeads + kvh) * p.keys + j) * p.vHeadSize + d)];
                }
            }
    return out;
}

// [B, S, N, H] (or [B, S, N*H]) values -> [B, N, S, H].
inline std::vector<double> toHeadMajor(const std::vector<double>& x, std::int64_t batch,
                                       std::int64_t seq, std::int64_t heads, std::int64_t size,
                                       std::int64_t rowStride = 0, std::int64_t offset = 0) {
    if (rowStride == 0) rowStride = heads * size;
    std::vector<double> y(static_cast<std::size_t>(batch * heads * seq * size));
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t s = 0; s < seq; ++s)
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t d = 0; d < size; ++d)
                    y[static_cast<std::size_t>(((b * heads + h) * seq + s) * size + d)] =
                        x[static_cast<std::size_t>((b * seq + s) * rowStride + offset + h * size +
                                                   d)];
    return y;
}

inline bool errorMentions(const Result<std::vector<Value>>& result,
                          std::initializer_list<const char*> words, std::string* message) {
    if (result) return false;
    *message = result.error().message;
    for (const char* w : words)
        if (message->find(w) == std::string::npos) return false;
    return true;
}

}  // namespace onnxlens::testing::msattention
