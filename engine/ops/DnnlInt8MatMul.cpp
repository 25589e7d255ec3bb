#include "DnnlInt8MatMul.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>

#include "ByteTranspose.h"
#include "DnnlCallArgs.h"
#include "DnnlInt8Saturation.h"
#include "OpenMpThreads.h"
#include "onnxlens/engine/WeightMemory.h"
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

constexpr std::size_t kMaxCachedShapes = 8;

// Products of at most this many rows (a decoder's token, a classifier's pooled features) run on
// the column kernel below, not on oneDNN: its GEMM packs B on every call (a [1, 1280] x [1280,
// 1000] classifier head took 0.33 ms of a 0.06 ms read of its weights on a 2-core Zen 3).
constexpr std::int64_t kFewRows = 4;

// y[r][j] = sum_k a[r][k] * columns[j][k] for the columns [j0, j1): `a` holds the rows with their
// zero point taken off (int16: -255 to 255), `columns` the weights one column per K bytes. Every
// product and pair sum is exact in int16 x int16 -> int32 multiply-adds (|a| <= 255, |w| <= 128),
// so the result is the exact integer sum on every processor, with or without VNNI.
void fewRowProduct(const std::int16_t* a, std::int64_t rows, std::int64_t k,
                   const std::int8_t* columns, std::int64_t n, std::int64_t j0, std::int64_t j1,
                   std::int32_t* y) {
    // The weights are one stream, read once: each column asks for the bytes kPrefetchAhead past
    // its own (the address formed as an integer: nothing points past the buffer).
    constexpr std::int64_t kPrefetchAhead = 16384;
    const auto base = reinterpret_cast<std::uintptr_t>(columns);
    const std::int64_t total = n * k;
    for (std::int64_t j = j0; j < j1; ++j) {
        const std::int8_t* __restrict__ w = columns + j * k;
        const std::int64_t ahead = std::min((j + 1) * k + kPrefetchAhead, total);
        for (std::int64_t at = j * k + kPrefetchAhead; at < ahead; at += 64)
            __builtin_prefetch(
                reinterpret_cast<const void*>(base + static_cast<std::uintptr_t>(at)));
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int16_t* __restrict__ x = a + r * k;
            // Summed modulo 2^32 (an int32 accumulator as the spec's output type; a hostile K
            // over 65,793 may wrap, as ORT's does, but is not undefined behaviour).
            std::uint32_t sum = 0;
            for (std::int64_t i = 0; i < k; ++i)
                sum += static_cast<std::uint32_t>(static_cast<std::int32_t>(x[i]) *
                                                  static_cast<std::int32_t>(w[i]));
            y[r * n + j] = static_cast<std::int32_t>(sum);
        }
    }
}
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

}  // namespace

struct DnnlInt8MatMul::State {
    struct Key {
        std::int64_t rows, k, n;
        bool signedA;
        int threads = threadCountOfCallingThread();  // oneDNN fixes it when the primitive is made
        auto operator<=>(const Key&) const = default;
    };
    struct Entry {
        dnnl::memory::desc a, b, y;
        dnnl::matmul primitive;
        DnnlCallArgs call;  // made once, pointed at each call's buffers
    };

    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::map<Key, Entry> cache;
    // The weights in the layout the primitives chose, made from `heldWeights` (kept so that the
    // same storage coming back means the same values), and the sum of each of their columns.
    Tensor heldWeights;
    dnnl::memory reordered, reorderedLow;
    bool reorderedCounted = false, reorderedLowCounted = false, columnsCounted = false;
    std::vector<std::int32_t> columnSums;
    bool split = false;
    std::vector<std::int8_t> highPlain, lowPlain;
    // The held weights one column after another ([N][K]), for the few-row kernel; made on its
    // first use.
    std::vector<std::int8_t> columns;

    const std::int8_t* columnsOf(const Tensor& b) {
        if (!b.sharesStorageWith(heldWeights)) {
            heldWeights = b;
            columnSums.clear();
            reordered = reorderedLow = dnnl::memory();
            highPlain.clear();
            lowPlain.clear();
            columns.clear();
        }
        if (columns.empty()) {
            const std::int64_t k = b.dim(0), n = b.dim(1);
            const std::int8_t* data = b.data<std::int8_t>();
            // 16 x 16 byte-block transposes (an element loop took 125 ms for a 50 MB decoder,
            // the first token's step after the prompt).
            columns.resize(static_cast<std::size_t>(k * n));
            transposeBytes(reinterpret_cast<const std::uint8_t*>(data), k, n, n,
                           reinterpret_cast<std::uint8_t*>(columns.data()), k);
            if (!columnsCounted) countWeightReorder(columns.size());
            columnsCounted = true;
        }
        return columns.data();
    }

    Entry* entryFor(const Key& key) {
        auto it = cache.find(key);
        if (it != cache.end()) return &it->second;
        if (cache.size() >= kMaxCachedShapes) cache.clear();
        Entry e;
        e.a = dnnl::memory::desc({key.rows, key.k}, key.signedA ? dt::s8 : dt::u8, tag::ab);
        e.b = dnnl::memory::desc({key.k, key.n}, dt::s8, tag::any);
        e.y = dnnl::memory::desc({key.rows, key.n}, dt::s32, tag::ab);
        try {
            dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.y), userScratchpad(),
                                            engine);
            e.b = pd.weights_desc();
            e.primitive = dnnl::matmul(pd);
            e.call.add(DNNL_ARG_SRC, e.a, engine);
            e.call.add(DNNL_ARG_WEIGHTS, e.b, engine);
            e.call.add(DNNL_ARG_DST, e.y, engine);
            e.call.addScratchpad(pd.scratchpad_desc(), engine);
        } catch (const dnnl::error&) {
            return nullptr;  // a combination this oneDNN does not implement
        }
        return &cache.emplace(key, std::move(e)).first->second;
    }

    // The weights as the primitive reads them: one operand, or the high and low halves of the
    // split that keeps the product exact where int8 pairs saturate (DnnlInt8Saturation.h).
    struct Weights {
        const void* high = nullptr;
        const void* low = nullptr;
        bool split = false;
    };

    Weights weightsFor(const Entry& e, const Tensor& b) {
        const bool same = b.sharesStorageWith(heldWeights) && !columnSums.empty();
        const dnnl::memory::desc plain({b.dim(0), b.dim(1)}, dt::s8, tag::ab);
        auto* data = const_cast<std::int8_t*>(b.data<std::int8_t>());
        if (!same) {
            const std::int64_t k = b.dim(0), n = b.dim(1);
            columnSums.assign(static_cast<std::size_t>(n), 0);
            for (std::int64_t r = 0; r < k; ++r)
                for (std::int64_t c = 0; c < n; ++c)
                    columnSums[static_cast<std::size_t>(c)] += data[r * n + c];
            split = int8WeightsNeedSplit(data, k * n);
            if (split) splitInt8Weights(data, k * n, highPlain, lowPlain);
            if (!b.sharesStorageWith(heldWeights)) columns.clear();
            heldWeights = b;
            reordered = reorderedLow = dnnl::memory();
        }
        if (!split) return {operand(e, plain, data, reordered), {}, false};
        return {operand(e, plain, highPlain.data(), reordered),
                operand(e, plain, lowPlain.data(), reorderedLow), true};
    }

    // `data` in the layout the primitive of `e` reads, reordered once into `kept`.
    const void* operand(const Entry& e, const dnnl::memory::desc& plain, std::int8_t* data,
                        dnnl::memory& kept) {
        if (e.b == plain) return data;
        if (kept && kept.get_desc() == e.b) return kept.get_data_handle();
        dnnl::memory source(plain, engine, data);
        // The copy kept, once per kernel (not each refresh, nor each time it comes back after
        // the few-row kernel's columns had it released).
        bool& counted = &kept == &reordered ? reorderedCounted : reorderedLowCounted;
        if (!counted) countWeightReorder(e.b.get_size());
        counted = true;
        kept = dnnl::memory(e.b, engine);
        dnnl::reorder(source, kept).execute(stream, source, kept);
        stream.wait();
        return kept.get_data_handle();
    }
};

DnnlInt8MatMul::DnnlInt8MatMul() : state_(std::make_unique<State>()) {}
DnnlInt8MatMul::~DnnlInt8MatMul() = default;

bool DnnlInt8MatMul::run(ThreadPool& pool, const Tensor& a, std::int32_t aZeroPoint,
                         const Tensor& b, const Int8MatMulEpilogue* epilogue, Tensor& y) {
    if (a.dtype() != DataType::UInt8 && a.dtype() != DataType::Int8) return false;
    if (b.dtype() != DataType::Int8 || b.rank() != 2 || a.rank() < 2) return false;
    const std::int64_t k = b.dim(0), n = b.dim(1);
    if (a.dim(a.rank() - 1) != k || k == 0 || n == 0 || a.numel() == 0) return false;
    const std::int64_t rows = a.numel() / k;
    if (y.numel() != rows * n) return false;
    const bool floatOutput = epilogue != nullptr;
    if (y.dtype() != (floatOutput ? DataType::Float : DataType::Int32)) return false;
    if (floatOutput && epilogue->scaleCount != 1 && epilogue->scaleCount != n) return false;

    State& s = *state_;
    std::lock_guard lock(s.mutex);
    if (rows <= kFewRows) return runFewRows(pool, a, aZeroPoint, b, epilogue, y);
    State::Entry* e = s.entryFor({rows, k, n, a.dtype() == DataType::Int8});
    if (!e) return false;
    const State::Weights weights = s.weightsFor(*e, b);
    // One extra copy of the weights at a time: the few-row kernel's columns go while oneDNN's
    // layout is in use (a decoder alternates once per prompt: its prefill, then its tokens).
    std::vector<std::int8_t>().swap(s.columns);
    // The product of the raw 8-bit values; the zero point comes off in the epilogue, exactly:
    // sum((a - z) * w) = sum(a * w) - z * sum(w). Without zero-point attributes oneDNN picks its
    // fastest (brgemm) kernels.
    Tensor raw = floatOutput ? Tensor(DataType::Int32, {rows, n}) : y;
    Tensor rawLow = weights.split ? Tensor(DataType::Int32, {rows, n}) : Tensor();
    e->call.execute(
        e->primitive, s.stream,
        {{DNNL_ARG_SRC, a.raw()}, {DNNL_ARG_WEIGHTS, weights.high}, {DNNL_ARG_DST, raw.raw()}});
    if (weights.split)  // the same A
        e->call.execute(e->primitive, s.stream,
                        {{DNNL_ARG_WEIGHTS, weights.low}, {DNNL_ARG_DST, rawLow.raw()}});
    s.stream.wait();

    std::int32_t* acc = raw.data<std::int32_t>();
    const std::int32_t* sums = s.columnSums.data();
    const double cost =
        (floatOutput ? 3.0 : 1.0) * static_cast<double>(n) * (weights.split ? 2 : 1);
    pool.parallelFor(rows, cost, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
            std::int32_t* row = acc + r * n;
            if (weights.split) {  // a x w = 2 (a x high) + a x low
                const std::int32_t* low = rawLow.data<std::int32_t>() + r * n;
                for (std::int64_t j = 0; j < n; ++j) row[j] = 2 * row[j] + low[j];
            }
            if (!floatOutput) {
                if (aZeroPoint != 0)
                    for (std::int64_t j = 0; j < n; ++j) row[j] -= aZeroPoint * sums[j];
                continue;
            }
            // Cast to float, multiply by the scale, add the bias: the unfused graph's order.
            float* out = y.data<float>() + r * n;
            const float* scale = epilogue->scale;
            const float* bias = epilogue->bias;
            for (std::int64_t j = 0; j < n; ++j) {
                float v = static_cast<float>(row[j] - aZeroPoint * sums[j]) *
                          scale[epilogue->scaleCount == 1 ? 0 : j];
                out[j] = bias ? v + bias[j] : v;
            }
        }
    });
    return true;
}

bool DnnlInt8MatMul::runFewRows(ThreadPool& pool, const Tensor& a, std::int32_t aZeroPoint,
                                const Tensor& b, const Int8MatMulEpilogue* epilogue, Tensor& y) {
    State& s = *state_;
    const std::int64_t k = b.dim(0), n = b.dim(1), rows = a.numel() / k;
    const std::int8_t* columns = s.columnsOf(b);
    // ... and oneDNN's reordered weights go while the columns are in use.
    s.reordered = s.reorderedLow = dnnl::memory();
    std::vector<std::int16_t> centred(static_cast<std::size_t>(rows * k));
    auto centre = [&](const auto* in) {
        for (std::size_t i = 0; i < centred.size(); ++i)
            centred[i] = static_cast<std::int16_t>(in[i] - aZeroPoint);
    };
    if (a.dtype() == DataType::UInt8)
        centre(a.data<std::uint8_t>());
    else
        centre(a.data<std::int8_t>());
    const bool floatOutput = epilogue != nullptr;
    std::vector<std::int32_t> raw(floatOutput ? static_cast<std::size_t>(rows * n) : 0);
    std::int32_t* acc = floatOutput ? raw.data() : y.data<std::int32_t>();
    // Columns over the threads: each reads its own share of the weights once.
    pool.parallelFor(n, 2.0 * static_cast<double>(rows * k), [&](std::int64_t j0, std::int64_t j1) {
        fewRowProduct(centred.data(), rows, k, columns, n, j0, j1, acc);
        if (!floatOutput) return;
        // Cast to float, multiply by the scale, add the bias: the unfused graph's order.
        const float* scale = epilogue->scale;
        const float* bias = epilogue->bias;
        for (std::int64_t r = 0; r < rows; ++r) {
            float* out = y.data<float>() + r * n;
            for (std::int64_t j = j0; j < j1; ++j) {
                const float v =
                    static_cast<float>(acc[r * n + j]) * scale[epilogue->scaleCount == 1 ? 0 : j];
                out[j] = bias ? v + bias[j] : v;
            }
        }
    });
    return true;
}

#else

struct DnnlInt8MatMul::State {};
DnnlInt8MatMul::DnnlInt8MatMul() = default;
DnnlInt8MatMul::~DnnlInt8MatMul() = default;
bool DnnlInt8MatMul::run(ThreadPool&, const Tensor&, std::int32_t, const Tensor&,
                         const Int8MatMulEpilogue*, Tensor&) {
    return false;
}

#endif

}  // namespace onnxlens::engine::ops
