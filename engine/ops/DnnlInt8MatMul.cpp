#include "DnnlInt8MatMul.h"

#include <map>
#include <mutex>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>

#include "DnnlInt8Saturation.h"
#include "onnxlens/engine/WeightMemory.h"
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

constexpr std::size_t kMaxCachedShapes = 8;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

}  // namespace

struct DnnlInt8MatMul::State {
    struct Key {
        std::int64_t rows, k, n;
        bool signedA;
        auto operator<=>(const Key&) const = default;
    };
    struct Entry {
        dnnl::memory::desc a, b, y;
        dnnl::matmul primitive;
    };

    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::map<Key, Entry> cache;
    // The weights in the layout the primitives chose, made from `heldWeights` (kept so that the
    // same storage coming back means the same values), and the sum of each of their columns.
    Tensor heldWeights;
    dnnl::memory reordered, reorderedLow;
    std::vector<std::int32_t> columnSums;
    bool split = false;
    std::vector<std::int8_t> highPlain, lowPlain;

    Entry* entryFor(const Key& key) {
        auto it = cache.find(key);
        if (it != cache.end()) return &it->second;
        if (cache.size() >= kMaxCachedShapes) cache.clear();
        Entry e;
        e.a = dnnl::memory::desc({key.rows, key.k}, key.signedA ? dt::s8 : dt::u8, tag::ab);
        e.b = dnnl::memory::desc({key.k, key.n}, dt::s8, tag::any);
        e.y = dnnl::memory::desc({key.rows, key.n}, dt::s32, tag::ab);
        try {
            dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.y), engine);
            e.b = pd.weights_desc();
            e.primitive = dnnl::matmul(pd);
        } catch (const dnnl::error&) {
            return nullptr;  // a combination this oneDNN does not implement
        }
        return &cache.emplace(key, std::move(e)).first->second;
    }

    // The weights as the primitive reads them: one operand, or the high and low halves of the
    // split that keeps the product exact where int8 pairs saturate (DnnlInt8Saturation.h).
    struct Weights {
        dnnl::memory high, low;
        bool split = false;
    };

    Weights weightsFor(const Entry& e, const Tensor& b) {
        const bool same = b.sharesStorageWith(heldWeights);
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
            heldWeights = b;
            reordered = reorderedLow = dnnl::memory();
        }
        if (!split) return {operand(e, plain, data, reordered), {}, false};
        return {operand(e, plain, highPlain.data(), reordered),
                operand(e, plain, lowPlain.data(), reorderedLow), true};
    }

    // `data` in the layout the primitive of `e` reads, reordered once into `kept`.
    dnnl::memory operand(const Entry& e, const dnnl::memory::desc& plain, std::int8_t* data,
                         dnnl::memory& kept) {
        if (e.b == plain) return dnnl::memory(plain, engine, data);
        if (kept && kept.get_desc() == e.b) return kept;
        dnnl::memory source(plain, engine, data);
        if (!kept) countWeightReorder(e.b.get_size());  // the copy kept, not each refresh
        kept = dnnl::memory(e.b, engine);
        dnnl::reorder(source, kept).execute(stream, source, kept);
        stream.wait();
        return kept;
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
    State::Entry* e = s.entryFor({rows, k, n, a.dtype() == DataType::Int8});
    if (!e) return false;
    const State::Weights weights = s.weightsFor(*e, b);
    // The product of the raw 8-bit values; the zero point comes off in the epilogue, exactly:
    // sum((a - z) * w) = sum(a * w) - z * sum(w). Without zero-point attributes oneDNN picks its
    // fastest (brgemm) kernels.
    Tensor raw = floatOutput ? Tensor(DataType::Int32, {rows, n}) : y;
    dnnl::memory am(e->a, s.engine, const_cast<void*>(a.raw()));
    dnnl::memory ym(e->y, s.engine, raw.raw());
    e->primitive.execute(
        s.stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights.high}, {DNNL_ARG_DST, ym}});
    Tensor rawLow;
    if (weights.split) {
        rawLow = Tensor(DataType::Int32, {rows, n});
        dnnl::memory lowm(e->y, s.engine, rawLow.raw());
        e->primitive.execute(
            s.stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights.low}, {DNNL_ARG_DST, lowm}});
    }
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
