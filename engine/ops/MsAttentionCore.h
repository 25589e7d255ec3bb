#pragma once
// The attention core shared by ONNX Runtime's com.microsoft attention operators
// (GroupQueryAttention, MultiHeadAttention, Attention) and the rotary rotation they share with
// RotaryEmbedding. Everything computes in float: float16/bfloat16 inputs are widened once by the
// kernels and their outputs narrowed back.
//
// Per (batch, query head) one product of the query rows with the key rows (Eigen, strided maps
// over the tensors' own layouts: no per-head copies, a key/value head shared by a group of query
// heads is read in place), then each query row's scores on its key range [lo, hi): softcap,
// additive mask, attention bias, softmax (with an optional sink term), and one product of the
// probabilities with the value rows. Keys outside a row's range get probability 0, exactly (not
// a large negative score). Work is split over batch * heads.
#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/engine/Kernel.h"

namespace onnxlens::engine::ops {

// Rows of `size` floats: row (b, h, s) starts at base + b * batch + h * head + s * row.
struct HeadRows {
    const float* base = nullptr;
    std::int64_t batch = 0, head = 0, row = 0;
    const float* at(std::int64_t b, std::int64_t h, std::int64_t s) const {
        return base + b * batch + h * head + s * row;
    }
};

struct AttentionCoreProblem {
    std::int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, headSize = 0, vHeadSize = 0;
    HeadRows q, k, v;      // q: [batch, heads, queries]; k, v: [batch, kvHeads, keys]
    float* out = nullptr;  // row (b, h, s) of vHeadSize at out + b*outBatch + h*outHead + s*outRow
    std::int64_t outBatch = 0, outHead = 0, outRow = 0;

    float scale = 1.0f;
    float softcap = 0.0f;  // > 0: softcap * tanh(score / softcap) before mask and bias

    // Key range of query row s of batch b: [lo, hi) with
    //   hi = causal ? min(causalOffset[b] + s + 1, keyCount[b]) : keyCount[b]
    //   lo = window > 0 ? max(0, hi - window) : 0
    std::vector<std::int64_t> keyCount, causalOffset;  // one per batch
    bool causal = false;
    std::int64_t window = -1;

    // Additive mask per (b, s, j) (broadcast over heads), or null.
    const float* mask = nullptr;
    std::int64_t maskBatch = 0, maskRow = 0;
    // Attention bias per (b, h, s, j) (strides 0 broadcast), or null.
    const float* bias = nullptr;
    std::int64_t biasBatch = 0, biasHead = 0, biasRow = 0;

    // Softmax with a sink: the denominator gains exp(sink - max); smooth softmax is a sink of 0.
    bool smoothSoftmax = false;
    const float* headSink = nullptr;  // one per query head, or null

    // Optional [batch, heads, queries, qkColumns] copy of the scores: mode 1 the scores before
    // softmax (after softcap, mask and bias), mode 2 the probabilities. Columns outside a row's
    // key range hold qkOutside.
    float* qk = nullptr;
    int qkMode = 0;
    std::int64_t qkColumns = 0;
    float qkOutside = 0.0f;
};

void runAttentionCore(KernelContext& ctx, const AttentionCoreProblem& problem);

// Rotates the first rotaryDim values of one head row in place by the angle whose cosines and
// sines (rotaryDim / 2 each) are given: halves (x[i], x[i + half]) or, interleaved, pairs
// (x[2i], x[2i + 1]).
void rotateRow(float* row, const float* cosines, const float* sines, std::int64_t rotaryDim,
               bool interleaved);

// An input or size named in an error message, "Op: name". Made into text only when a check fails:
// the checks run every step of a decode.
struct ValueName {
    const char* op;
    const char* name;
    std::string text() const { return std::string(op) + ": " + name; }
};

// The float attention operators accept: float, float16, bfloat16. Throws naming the input.
void requireAttentionFloat(const Tensor& t, const ValueName& what);
// t as float (t itself when it already is).
Tensor asFloat(const Tensor& t);

// Throws naming `what` when the product of t's non-zero dimensions overflows 64 bits (an empty
// tensor may declare huge dimensions; strides computed from them must not overflow).
void requireCountable(const Tensor& t, const ValueName& what);
// The same for every tensor given (null entries skipped).
void requireCountable(std::initializer_list<std::pair<const Tensor*, const char*>> tensors,
                      const char* op);

// a + b for sizes read from tensors and attributes; throws naming `what` on overflow.
std::int64_t checkedSum(std::int64_t a, std::int64_t b, const ValueName& what);

// c [rows, n] = a [rows, k] x w [k, n] (+ bias [n]), row-major, on the calling thread.
void denseRows(const float* a, const float* w, const float* bias, float* c, std::int64_t rows,
               std::int64_t k, std::int64_t n);

}  // namespace onnxlens::engine::ops
