#include "DnnlMatMul.h"

#include <bit>
#include <map>
#include <mutex>
#include <vector>

#include "DnnlCallArgs.h"
#include "OpenMpThreads.h"

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

// Below this many multiply-adds the primitive's fixed cost outweighs its faster kernel (the
// small recurrent and voice-activity models stay on the Eigen path).
constexpr std::int64_t kMinMultiplyAdds = 64 * 64 * 64;
constexpr std::size_t kMaxRank = 6;
constexpr std::size_t kMaxCachedShapes = 8;

using Dims = dnnl::memory::dims;

// Dense row-major strides of `dims`; with `transposed`, the last two dims are stored swapped.
Dims rowMajorStrides(const Dims& dims, bool transposed) {
    Dims strides(dims.size());
    std::int64_t step = 1;
    for (std::size_t d = dims.size(); d-- > 0;) {
        strides[d] = step;
        step *= dims[d];
    }
    if (transposed) {
        const std::size_t r = dims.size();
        strides[r - 1] = dims[r - 2];
        strides[r - 2] = 1;
    }
    return strides;
}

dnnl::memory::desc floatDesc(const Dims& dims, bool transposed = false) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                              rowMajorStrides(dims, transposed));
}

}  // namespace

struct DnnlMatMul::State {
    struct Key {
        Dims a, b;
        bool bias, transA, transB;
        MatMulActivation activation;
        std::uint32_t alphaBits;  // alpha's bits (a NaN alpha must not break the map's order)
        int threads = 0;  // the primitive's team: oneDNN fixes it when the primitive is made
        auto operator<=>(const Key&) const = default;
    };
    struct Entry {
        dnnl::memory::desc a, b, y, bias;
        dnnl::matmul primitive;
        DnnlCallArgs call;  // the primitive's arguments, pointed at each call's buffers
    };

    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::map<Key, Entry> cache;

    Entry& entryFor(const Key& key, const Dims& yDims) {
        auto it = cache.find(key);
        if (it != cache.end()) return it->second;
        if (cache.size() >= kMaxCachedShapes) cache.clear();  // a node seeing ever new shapes
        Entry e;
        e.a = floatDesc(key.a, key.transA);
        e.b = floatDesc(key.b, key.transB);
        e.y = floatDesc(yDims);
        dnnl::primitive_attr attr;
        dnnl::post_ops ops;
        if (key.alphaBits != std::bit_cast<std::uint32_t>(1.0f))
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear,
                               std::bit_cast<float>(key.alphaBits), 0.0f);
        if (key.activation == MatMulActivation::Gelu)
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
        if (ops.len() > 0) attr.set_post_ops(ops);
        if (key.bias) {
            Dims biasDims(yDims.size(), 1);
            biasDims.back() = yDims.back();
            e.bias = floatDesc(biasDims);
        }
        // oneDNN 2.x: an operation descriptor, then the primitive descriptor.
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.bias, e.y),
                                        userScratchpad(attr), engine);
        e.primitive = dnnl::matmul(pd);
        e.call.add(DNNL_ARG_SRC, e.a, engine);
        e.call.add(DNNL_ARG_WEIGHTS, e.b, engine);
        e.call.add(DNNL_ARG_DST, e.y, engine);
        if (key.bias) e.call.add(DNNL_ARG_BIAS, e.bias, engine);
        e.call.addScratchpad(pd.scratchpad_desc(), engine);
        return cache.emplace(key, std::move(e)).first->second;
    }
};

namespace {

// oneDNN generates its GEMM's JIT kernels on the first product a process runs, not when the
// primitive is created: 15-17 ms on the 2-core Zen 3, which the first run of a model paid inside
// its first MatMul (a torch-exported Llama-style decoder's 64-token prefill: 55-70 ms first, 37-52
// after). Kernels are made when a session is created, so one small product then moves that cost
// to the load.
void generateGemmKernelsOnce() {
    static std::once_flag once;
    std::call_once(once, [] {
        constexpr std::int64_t kSide = 64;
        std::vector<float> a(kSide * kSide, 1.0f), b(kSide * kSide, 1.0f), y(kSide * kSide);
        dnnl::engine engine(dnnl::engine::kind::cpu, 0);
        dnnl::stream stream(engine);
        const dnnl::memory::desc desc = floatDesc({kSide, kSide});
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(desc, desc, desc), engine);
        dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, dnnl::memory(desc, engine, a.data())},
                                          {DNNL_ARG_WEIGHTS, dnnl::memory(desc, engine, b.data())},
                                          {DNNL_ARG_DST, dnnl::memory(desc, engine, y.data())}});
        stream.wait();
    });
}

}  // namespace

DnnlMatMul::DnnlMatMul() : state_(std::make_unique<State>()) { generateGemmKernelsOnce(); }
DnnlMatMul::~DnnlMatMul() = default;

bool DnnlMatMul::run(const Tensor& a, const Tensor& b, const float* bias,
                     MatMulActivation activation, Tensor& y, bool transA, bool transB,
                     float alpha) {
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float ||
        y.dtype() != DataType::Float)
        return false;
    if (bias && alpha != 1.0f) return false;
    const auto ra = static_cast<std::size_t>(a.rank()), rb = static_cast<std::size_t>(b.rank());
    if (ra < 2 || rb < 2 || ra > kMaxRank || rb > kMaxRank) return false;
    const auto dimA = [&](std::size_t fromEnd) {
        return a.dim(static_cast<std::int64_t>(ra - fromEnd));
    };
    const auto dimB = [&](std::size_t fromEnd) {
        return b.dim(static_cast<std::int64_t>(rb - fromEnd));
    };
    const std::int64_t m = transA ? dimA(1) : dimA(2);
    const std::int64_t k = transA ? dimA(2) : dimA(1);
    const std::int64_t n = transB ? dimB(2) : dimB(1);
    if (m == 0 || k == 0 || n == 0 || m * k * n < kMinMultiplyAdds) return false;

    State::Key key{
        {}, {}, bias != nullptr, transA, transB, activation, std::bit_cast<std::uint32_t>(alpha)};
    Dims yDims;
    if (rb == 2 && (ra == 2 || !transA)) {
        // One GEMM over every row of A: [rows, K] x [K, N].
        const std::int64_t rows = transA ? m : a.numel() / k;
        key.a = {rows, k};
        key.b = {k, n};
        yDims = {rows, n};
    } else {
        const std::size_t r = std::max(ra, rb);
        // Logical dims (the last two swapped back when stored transposed).
        key.a.assign(r - ra, 1);
        key.b.assign(r - rb, 1);
        for (auto d : a.shape()) key.a.push_back(d);
        for (auto d : b.shape()) key.b.push_back(d);
        if (transA) std::swap(key.a[r - 1], key.a[r - 2]);
        if (transB) std::swap(key.b[r - 1], key.b[r - 2]);
        yDims.resize(r);
        for (std::size_t d = 0; d + 2 < r; ++d) yDims[d] = std::max(key.a[d], key.b[d]);
        yDims[r - 2] = m;
        yDims[r - 1] = n;
    }
    if (y.numel() != [&] {
            std::int64_t count = 1;
            for (auto d : yDims) count *= d;
            return count;
        }())
        return false;

    State& s = *state_;
    std::lock_guard lock(s.mutex);
    // A small product is created and run on the threads its work is worth (a fork and join
    // cost more than a thread with little to do gains).
    const ThreadBudget budget(2.0 * static_cast<double>(y.numel()) * static_cast<double>(k));
    key.threads = threadCountOfCallingThread();
    State::Entry& e = s.entryFor(key, yDims);
    e.call.execute(e.primitive, s.stream,
                   {{DNNL_ARG_SRC, a.data<float>()},
                    {DNNL_ARG_WEIGHTS, b.data<float>()},
                    {DNNL_ARG_DST, y.data<float>()},
                    {DNNL_ARG_BIAS, bias}});
    s.stream.wait();
    return true;
}

#else

struct DnnlMatMul::State {};
DnnlMatMul::DnnlMatMul() = default;
DnnlMatMul::~DnnlMatMul() = default;
bool DnnlMatMul::run(const Tensor&, const Tensor&, const float*, MatMulActivation, Tensor&, bool,
                     bool, float) {
    return false;
}

#endif

}  // namespace onnxlens::engine::ops
