#include "DnnlPackedMatMul.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "DnnlCallArgs.h"
#include "OpenMpThreads.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/engine/WeightMemory.h"

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

constexpr std::size_t kMaxCachedShapes = 16;

// oneDNN's 1x1 convolution shares its work among threads by positions (rows) only, in groups of
// a few rows, and leaves every output channel of a group to one thread: a decode step's products
// (one row) ran on one thread whatever the count, at one core's memory bandwidth (issue 30: the
// 30 M decoders' 2-thread steps were no faster than 1-thread ones). With fewer than this many
// rows per thread, the output columns are split instead: each thread runs the primitive on its
// own range of weight blocks, contiguous in the packed layout, and writes its columns of Y. The
// limit: oneDNN (AVX2) gave 8 rows to one thread too (GPT-2-style lm_head, 8 rows: 4.3 ms at 1
// thread, 4.9 ms at 2). oneDNN's brgemm 1x1 convolution (the Owi layouts, AVX-512) shares fewer
// rows per thread well: 16 rows on 2 threads ran faster split by rows (MiniLM, sequence 16, 2
// threads: 2.10-2.32 ms against 2.24-2.46 split by columns, 4 of 5 alternating runs), where the
// AVX2 kernel's were slower so (2.88-2.93 against 2.67-2.71 ms under ONEDNN_MAX_CPU_ISA=AVX2).
constexpr std::int64_t kRowsPerThreadBeforeColumnSplit = 16;
constexpr std::int64_t kBrgemmRowsPerThreadBeforeColumnSplit = 8;

std::int64_t rowsPerThreadBeforeColumnSplit(PackedMatMulBlocks blocks) {
    return blocks.k == 1 ? kBrgemmRowsPerThreadBeforeColumnSplit : kRowsPerThreadBeforeColumnSplit;
}

// Whether oneDNN chose its reference code (`ref:any`): what it offers when no jit kernel takes
// the problem, orders of magnitude slower.
bool isReferenceKernel(const dnnl::primitive_desc_base& pd) {
    return std::string_view(pd.impl_info_str()).starts_with("ref");
}

// oneDNN's format tag of the packed layout with these blocks (PackedMatMulWeights.h).
dnnl::memory::format_tag packedTag(PackedMatMulBlocks blocks) {
    using tag = dnnl::memory::format_tag;
    if (blocks.k == 8) return tag::OIw8i8o;
    if (blocks.k == 16) return tag::OIw16i16o;
    switch (blocks.n) {
        case 16:
            return tag::Owi16o;
        case 32:
            return tag::Owi32o;
        case 48:
            return tag::Owi48o;
        default:
            return tag::Owi64o;
    }
}

dnnl::memory::desc packedDesc(std::int64_t k, std::int64_t n, PackedMatMulBlocks blocks) {
    return {{n, k, 1}, dnnl::memory::data_type::f32, packedTag(blocks)};
}

}  // namespace

struct DnnlPackedMatMul::State {
    struct Key {
        std::int64_t rows, k, n, blockK, blockN;
        bool bias;
        MatMulActivation activation;
        // The primitive's team, as the lookup's caller set it (ThreadBudget, SerialRegion, the
        // session's governor): oneDNN fixes it when the primitive is made.
        int threads = threadCountOfCallingThread();
        auto operator<=>(const Key&) const = default;
    };
    struct Entry {
        dnnl::memory::desc src, dst, weights, bias, scratchpad;
        dnnl::convolution_forward primitive;
        bool packedInPlace = false;  // the weights layout oneDNN chose is the packed one
        std::string implementation;  // oneDNN's name of the kernel, e.g. brgconv_1x1:avx512_core
        DnnlCallArgs call;           // the whole product's arguments (run(), not the slices)
        std::uint64_t id = 0;        // which entry this is (an address may be reused)
    };
    // A primitive's arguments, the scratchpad the calling thread's (DnnlCallArgs.h).
    static DnnlCallArgs argumentsOf(const Entry& e, bool bias, const dnnl::engine& engine) {
        DnnlCallArgs call;
        call.add(DNNL_ARG_SRC, e.src, engine);
        call.add(DNNL_ARG_WEIGHTS, e.weights, engine);
        call.add(DNNL_ARG_DST, e.dst, engine);
        if (bias) call.add(DNNL_ARG_BIAS, e.bias, engine);
        call.addScratchpad(e.scratchpad, engine);
        return call;
    }
    // A column slice's own arguments (slices of one width share an entry and run at once),
    // made for the entry `entryId`.
    struct SliceCall {
        std::uint64_t entryId = 0;
        DnnlCallArgs call;
    };

    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::map<Key, Entry> cache;
    std::uint64_t entriesMade = 0;
    std::vector<std::string> lastImplementations;
    // Weights in another layout than the packed one (a CPU whose kernels block otherwise):
    // reordered once, kept while the same packed buffer comes back.
    dnnl::memory reordered;
    dnnl::memory::desc reorderedDesc;
    Tensor heldPacked;
    // One stream per slice of columns run at once (runColumnSlices), and the slices' results
    // of a product of several rows (slice t's [rows, columns] from rows * its first column on).
    std::vector<dnnl::stream> sliceStreams;
    std::vector<float> sliceResults;
    std::vector<SliceCall> sliceCalls;

    Entry* entryFor(const Key& key) {
        auto it = cache.find(key);
        if (it != cache.end()) return &it->second;
        if (cache.size() >= kMaxCachedShapes) cache.clear();  // a node seeing ever new shapes
        using tag = dnnl::memory::format_tag;
        using dt = dnnl::memory::data_type;
        Entry e;
        // N = 1, C = K channels, W = rows positions: nwc is A's row-major [rows, K].
        e.src = dnnl::memory::desc({1, key.k, key.rows}, dt::f32, tag::nwc);
        e.dst = dnnl::memory::desc({1, key.n, key.rows}, dt::f32, tag::nwc);
        const dnnl::memory::desc anyWeights({key.n, key.k, 1}, dt::f32, tag::any);
        if (key.bias) e.bias = dnnl::memory::desc({key.n}, dt::f32, tag::x);
        dnnl::primitive_attr attr;
        // Each execution gets its running thread's scratchpad: the column slices run one
        // primitive on several threads at once, and oneDNN's brgemm kernels keep their
        // accumulators there (with the library's scratchpad, 2-3 threads on one brgconv_1x1
        // primitive gave wrong columns).
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (key.activation == MatMulActivation::Gelu) {
            dnnl::post_ops ops;
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
            attr.set_post_ops(ops);
        }
        const dnnl::memory::desc packed = packedDesc(key.k, key.n, {key.blockK, key.blockN});
        // The packed layout first: a kernel that reads it uses the session's weights in place.
        // Only when none does, the layout oneDNN prefers, into which the weights are reordered
        // once (a second copy of every packed weight). The optimizer packs in the layout oneDNN
        // prefers on this processor (preferredPackedMatMulBlocks), so that is the exception.
        // oneDNN's reference code is never taken: when no jit kernel reads a layout, oneDNN
        // 2.6 falls back to `ref:any`, which ran ResNet-50's classifier (1 row, K 2048, N 1000)
        // in 82 ms instead of 0.3 ms (16-core Xeon, 1 thread; the brgemm kernel's choice of
        // blocks for one row depends on the thread count and the cache sizes). Then the
        // layout oneDNN prefers, and without a jit kernel for that either, the caller's product.
        for (const dnnl::memory::desc& weights : {packed, anyWeights}) {
            try {
                // oneDNN 2.x: an operation descriptor, then the primitive descriptor.
                auto operation = dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, e.src,
                    weights, e.bias, e.dst, {1}, {0}, {0});
                dnnl::convolution_forward::primitive_desc pd(operation, attr, engine);
                if (isReferenceKernel(pd)) continue;
                e.weights = pd.weights_desc();
                e.scratchpad = pd.scratchpad_desc();
                e.implementation = pd.impl_info_str();
                e.primitive = dnnl::convolution_forward(pd);
                break;
            } catch (const dnnl::error&) {
                // no such convolution for this layout
            }
        }
        if (e.implementation.empty()) return nullptr;  // the caller computes it
        e.packedInPlace = e.weights == packed;
        e.call = argumentsOf(e, key.bias, engine);
        e.id = ++entriesMade;
        return &cache.emplace(key, std::move(e)).first->second;
    }
};

DnnlPackedMatMul::DnnlPackedMatMul() : state_(std::make_unique<State>()) {}
DnnlPackedMatMul::~DnnlPackedMatMul() = default;

bool DnnlPackedMatMul::run(const float* a, std::int64_t rows, std::int64_t k, std::int64_t n,
                           const Tensor& packed, const float* bias, MatMulActivation activation,
                           float* y, ThreadPool* pool) {
    if (packed.dtype() != DataType::Float || rows < 1) return false;
    const auto blocks = packedMatMulBlocksOf(packed.shape(), k, n);
    if (!blocks) return false;
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(k * n);
    if (runColumnSlices(a, rows, k, n, packed, bias, activation, y, pool, flops)) return true;
    // A small product is created and run on the threads its work is worth.
    const ThreadBudget budget(flops);
    State::Entry* e = s.entryFor({rows, k, n, blocks->k, blocks->n, bias != nullptr, activation});
    if (!e) return false;
    const float* weights = packed.data<float>();
    if (!e->packedInPlace) {
        if (!s.reordered || s.reorderedDesc != e->weights ||
            !packed.sharesStorageWith(s.heldPacked)) {
            dnnl::memory user(packedDesc(k, n, *blocks), s.engine, const_cast<float*>(weights));
            if (!s.reordered) countWeightReorder(e->weights.get_size());
            s.reordered = dnnl::memory(e->weights, s.engine);
            dnnl::reorder(user, s.reordered).execute(s.stream, user, s.reordered);
            s.reorderedDesc = e->weights;
            s.heldPacked = packed;
        }
        weights = static_cast<const float*>(s.reordered.get_data_handle());
    }
    e->call.execute(
        e->primitive, s.stream,
        {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, y}, {DNNL_ARG_BIAS, bias}});
    s.stream.wait();
    if (s.lastImplementations.size() != 1 || s.lastImplementations.front() != e->implementation)
        s.lastImplementations = {e->implementation};
    return true;
}

std::vector<std::string> DnnlPackedMatMul::lastImplementations() const {
    const std::lock_guard lock(state_->mutex);
    return state_->lastImplementations;
}

bool DnnlPackedMatMul::runColumnSlices(const float* a, std::int64_t rows, std::int64_t k,
                                       std::int64_t n, const Tensor& packed, const float* bias,
                                       MatMulActivation activation, float* y, ThreadPool* pool,
                                       double flops) {
    if (!pool || pool->threads() < 2 || flops < 2.0 * kSerialWorkFlops) return false;
    const PackedMatMulBlocks blocks{packed.dim(2), packed.dim(3)};
    const std::int64_t block = blocks.n, nBlocks = (n + block - 1) / block;
    const std::int64_t mostSlices =
        std::min<std::int64_t>(threadsWorthFor(flops, pool->threads()), nBlocks);
    if (mostSlices < 2 || rows >= rowsPerThreadBeforeColumnSplit(blocks) * pool->threads())
        return false;
    State& s = *state_;
    // Slice t holds weight blocks [nBlocks * t / slices, nBlocks * (t + 1) / slices): each width
    // of slice is a primitive of its own; all of them must read the packed weights in place
    // (their blocks are then a contiguous range of the buffer) with a jit kernel.
    struct Slice {
        std::int64_t firstBlock, columns;
        State::Entry* entry;
        float* result;  // the slice's [rows, columns] when rows > 1
    };
    std::vector<Slice> plan;
    const SerialRegion serial;  // each slice's primitive is made for the one thread it gets
    // Fewer, wider slices when a width has no such kernel: oneDNN 2.6's brgemm kernel chooses its
    // own output blocking for a narrow slice that ends in a partial block (88 or 136 of 1000
    // columns in 48-column blocks) and then reads only another layout.
    for (std::int64_t slices = mostSlices; slices >= 2 && plan.empty(); slices /= 2) {
        // A plan has at most three widths (two of whole blocks, and the last slice's); entryFor
        // empties a full cache before it adds a shape, so with room for three made first the
        // entries the plan points at stay valid while the later slices are made.
        if (s.cache.size() + 3 > kMaxCachedShapes) s.cache.clear();
        for (std::int64_t t = 0; t < slices; ++t) {
            const std::int64_t first = nBlocks * t / slices, last = nBlocks * (t + 1) / slices;
            const std::int64_t columns = std::min(last * block, n) - first * block;
            // Each slice writes a dense [rows, columns] result (oneDNN's jit kernels refuse a
            // strided one): in place for one row, else into its own buffer, copied into Y's
            // columns after.
            State::Entry* e =
                s.entryFor({rows, k, columns, blocks.k, blocks.n, bias != nullptr, activation});
            if (!e || !e->packedInPlace) {
                plan.clear();
                break;
            }
            plan.push_back({first, columns, e, nullptr});
        }
    }
    if (plan.empty()) return false;
    // Assigned in place: the strings keep their storage from call to call.
    s.lastImplementations.resize(plan.size());
    for (std::size_t t = 0; t < plan.size(); ++t)
        s.lastImplementations[t] = plan[t].entry->implementation;
    if (rows > 1) {
        s.sliceResults.resize(static_cast<std::size_t>(rows * n));
        for (Slice& slice : plan)
            slice.result = s.sliceResults.data() + rows * slice.firstBlock * block;
    }
    while (s.sliceStreams.size() < plan.size()) s.sliceStreams.emplace_back(s.engine);
    if (s.sliceCalls.size() < plan.size()) s.sliceCalls.resize(plan.size());
    for (std::size_t t = 0; t < plan.size(); ++t) {
        const State::Entry& e = *plan[t].entry;
        State::SliceCall& sliceCall = s.sliceCalls[t];
        if (sliceCall.entryId == e.id) continue;
        sliceCall.entryId = e.id;
        sliceCall.call = State::argumentsOf(e, bias != nullptr, s.engine);
    }
    const std::int64_t blockSize = blocks.k * blocks.n * ((k + blocks.k - 1) / blocks.k);
    const float* w = packed.data<float>();
    // One slice per thread; oneDNN, called inside the parallel loop, runs each on that thread.
    pool->parallelFor(static_cast<std::int64_t>(plan.size()),
                      flops / static_cast<double>(plan.size()),
                      [&](std::int64_t begin, std::int64_t end) {
                          for (std::int64_t t = begin; t < end; ++t) {
                              const Slice& slice = plan[static_cast<std::size_t>(t)];
                              const std::int64_t column = slice.firstBlock * block;
                              State::Entry& e = *slice.entry;
                              const auto at = static_cast<std::size_t>(t);
                              dnnl::stream& stream = s.sliceStreams[at];
                              s.sliceCalls[at].call.execute(
                                  e.primitive, stream,
                                  {{DNNL_ARG_SRC, a},
                                   {DNNL_ARG_WEIGHTS, w + slice.firstBlock * blockSize},
                                   {DNNL_ARG_DST, rows == 1 ? y + column : slice.result},
                                   {DNNL_ARG_BIAS, bias ? bias + column : nullptr}});
                              stream.wait();
                              if (rows > 1)
                                  for (std::int64_t r = 0; r < rows; ++r)
                                      std::copy_n(slice.result + r * slice.columns, slice.columns,
                                                  y + r * n + column);
                          }
                      });
    return true;
}

namespace {

// oneDNN's choice of weights layout for a K x N product (the question above), asked once.
PackedMatMulBlocks askOneDnnForPackedBlocks(std::int64_t k, std::int64_t n,
                                            std::int64_t fallbackBlock) {
    const PackedMatMulBlocks fallback{fallbackBlock, fallbackBlock};
    // The rows are not known when the weights are packed; oneDNN 2.6's choice of weights layout
    // for these 1x1 convolutions did not depend on them (1 to 512 rows, AVX-512) but for very
    // narrow products.
    constexpr std::int64_t kTypicalRows = 64;
    try {
        static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
        using tag = dnnl::memory::format_tag;
        using dt = dnnl::memory::data_type;
        const dnnl::memory::desc src({1, k, kTypicalRows}, dt::f32, tag::nwc);
        const dnnl::memory::desc dst({1, n, kTypicalRows}, dt::f32, tag::nwc);
        const dnnl::memory::desc anyWeights({n, k, 1}, dt::f32, tag::any);
        const auto operation = dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
            anyWeights, dnnl::memory::desc(), dst, {1}, {0}, {0});
        const dnnl::convolution_forward::primitive_desc pd(operation, engine);
        if (isReferenceKernel(pd)) return fallback;
        const dnnl::memory::desc chosen = pd.weights_desc();
        for (const PackedMatMulBlocks blocks : kPackedMatMulLayouts)
            if (chosen == packedDesc(k, n, blocks)) return blocks;
    } catch (const dnnl::error&) {
    }
    return fallback;
}

}  // namespace

// Remembered per (K, N, fallback) for the process: a model's weights repeat a few shapes (BERT-
// base's 72 weights have 3), and each question builds a primitive descriptor.
PackedMatMulBlocks preferredPackedMatMulBlocks(std::int64_t k, std::int64_t n,
                                               std::int64_t fallbackBlock) {
    static std::mutex mutex;
    static std::map<std::array<std::int64_t, 3>, PackedMatMulBlocks> answers;
    const std::array<std::int64_t, 3> key{k, n, fallbackBlock};
    {
        const std::lock_guard lock(mutex);
        if (auto found = answers.find(key); found != answers.end()) return found->second;
    }
    const PackedMatMulBlocks blocks = askOneDnnForPackedBlocks(k, n, fallbackBlock);
    const std::lock_guard lock(mutex);
    answers.emplace(key, blocks);
    return blocks;
}

#else

PackedMatMulBlocks preferredPackedMatMulBlocks(std::int64_t, std::int64_t,
                                               std::int64_t fallbackBlock) {
    return {fallbackBlock, fallbackBlock};
}

struct DnnlPackedMatMul::State {};
DnnlPackedMatMul::DnnlPackedMatMul() = default;
DnnlPackedMatMul::~DnnlPackedMatMul() = default;
bool DnnlPackedMatMul::run(const float*, std::int64_t, std::int64_t, std::int64_t, const Tensor&,
                           const float*, MatMulActivation, float*, ThreadPool*) {
    return false;
}
std::vector<std::string> DnnlPackedMatMul::lastImplementations() const { return {}; }

#endif

}  // namespace onnxlens::engine::ops
