#include "DnnlInt8Conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>

#include "onnxlens/engine/WeightMemory.h"
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// The channels-last source and the accumulators of one run, kept per calling thread: the largest
// layer's, not one set per node.
struct Scratch {
    std::vector<std::uint8_t> source, lowBits;
    std::vector<std::int32_t> acc;
};

Scratch& scratch() {
    thread_local Scratch s;
    return s;
}

// The padded spatial size of dim s (the primitive runs unpadded on it).
std::int64_t paddedInput(const WindowGeometry& g, int s) {
    return g.input[s] + g.padBegin[s] + g.padEnd[s];
}

}  // namespace

bool DnnlInt8Conv::exactDotProducts() {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    // The VNNI bits of dnnl_cpu_isa_avx512_core_vnni (and its successors) and avx2_vnni.
    return (isa & 0x40u) != 0 || (isa & 0x400u) != 0;
}

struct DnnlInt8Conv::State {
    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    const bool exact = exactDotProducts();

    std::vector<std::int64_t> key;
    std::unique_ptr<dnnl::convolution_forward> primitive;
    dnnl::memory::desc srcDesc, dstDesc, userWeightsDesc, weightsDesc;
    bool refused = false;  // the key's problem is one oneDNN does not implement

    // The weights the primitive reads, made from `heldWeights` (kept so that the same storage
    // coming back means the same values), the sum of each output channel's weights, and (without
    // VNNI) the weights transposed to [C][taps][M/G] for the high-bit pass.
    Tensor heldWeights;
    dnnl::memory reordered;
    std::vector<std::int32_t> channelSums;
    std::vector<std::int8_t> transposed;

    static std::vector<std::int64_t> keyOf(const ConvProblem& pr) {
        const WindowGeometry& g = pr.geometry;
        std::vector<std::int64_t> key{pr.batch, pr.inChannels, pr.outChannels, pr.groups,
                                      g.spatialRank};
        for (int s = 0; s < kMaxWindowRank; ++s)
            key.insert(key.end(),
                       {paddedInput(g, s), g.output[s], g.kernel[s], g.stride[s], g.dilation[s]});
        return key;
    }

    bool prepare(const ConvProblem& pr) {
        std::vector<std::int64_t> k = keyOf(pr);
        if (k == key) return !refused;
        key = std::move(k);
        primitive.reset();
        reordered = dnnl::memory();
        heldWeights = Tensor();
        refused = false;
        const WindowGeometry& g = pr.geometry;
        const int offset = kMaxWindowRank - g.spatialRank, r = g.spatialRank - 1;
        auto spatial = [&](auto value) {
            dnnl::memory::dims dims;
            for (int s = offset; s < kMaxWindowRank; ++s) dims.push_back(value(s));
            return dims;
        };
        dnnl::memory::dims srcDims{pr.batch, pr.inChannels}, dstDims{pr.batch, pr.outChannels};
        for (auto d : spatial([&](int s) { return paddedInput(g, s); })) srcDims.push_back(d);
        for (auto d : spatial([&](int s) { return g.output[s]; })) dstDims.push_back(d);
        dnnl::memory::dims weightDims;
        if (pr.groups > 1)
            weightDims = {pr.groups, pr.outChannelsPerGroup(), pr.inChannelsPerGroup()};
        else
            weightDims = {pr.outChannels, pr.inChannels};
        for (auto d : spatial([&](int s) { return g.kernel[s]; })) weightDims.push_back(d);
        const tag lastTags[] = {tag::nwc, tag::nhwc, tag::ndhwc};
        const tag weightTags[] = {tag::oiw, tag::oihw, tag::oidhw};
        const tag groupTags[] = {tag::goiw, tag::goihw, tag::goidhw};
        srcDesc = dnnl::memory::desc(srcDims, dt::u8, lastTags[r]);
        dstDesc = dnnl::memory::desc(dstDims, dt::s32, lastTags[r]);
        userWeightsDesc =
            dnnl::memory::desc(weightDims, dt::s8, pr.groups > 1 ? groupTags[r] : weightTags[r]);
        const dnnl::memory::desc anyWeights(weightDims, dt::s8, tag::any);
        const auto strides = spatial([&](int s) { return g.stride[s]; });
        const auto dilations = spatial([&](int s) { return g.dilation[s] - 1; });
        const auto zeros = spatial([](int) { return std::int64_t{0}; });
        try {
            auto operation = dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, srcDesc,
                anyWeights, dnnl::memory::desc(), dstDesc, strides, dilations, zeros, zeros);
            dnnl::convolution_forward::primitive_desc pd(operation, engine);
            weightsDesc = pd.weights_desc();
            primitive = std::make_unique<dnnl::convolution_forward>(pd);
        } catch (const dnnl::error&) {
            refused = true;
        }
        return !refused;
    }

    dnnl::memory weightsFor(const ConvProblem& pr, const Tensor& w) {
        if (reordered && w.sharesStorageWith(heldWeights)) return reordered;
        const std::int8_t* data = w.data<std::int8_t>();
        const std::int64_t M = pr.outChannels, Mg = pr.outChannelsPerGroup();
        const std::int64_t Cg = pr.inChannelsPerGroup(), taps = pr.geometry.kernelSize();
        const std::int64_t perChannel = Cg * taps;
        channelSums.assign(static_cast<std::size_t>(M), 0);
        for (std::int64_t m = 0; m < M; ++m) {
            std::int32_t sum = 0;
            for (std::int64_t i = 0; i < perChannel; ++i) sum += data[m * perChannel + i];
            channelSums[static_cast<std::size_t>(m)] = sum;
        }
        if (!exact) {
            // [g][c][tap][j] = w[g * Mg + j][c][tap]
            transposed.assign(static_cast<std::size_t>(M * perChannel), 0);
            for (std::int64_t m = 0; m < M; ++m) {
                const std::int64_t group = m / Mg, j = m % Mg;
                for (std::int64_t i = 0; i < perChannel; ++i)
                    transposed[static_cast<std::size_t>((group * perChannel + i) * Mg + j)] =
                        data[m * perChannel + i];
            }
        }
        if (!reordered) countWeightReorder(weightsDesc.get_size());
        dnnl::memory user(userWeightsDesc, engine, const_cast<std::int8_t*>(data));
        reordered = dnnl::memory(weightsDesc, engine);
        dnnl::reorder(user, reordered).execute(stream, user, reordered);
        stream.wait();
        heldWeights = w;
        return reordered;
    }
};

DnnlInt8Conv::DnnlInt8Conv() : state_(std::make_unique<State>()) {}
DnnlInt8Conv::~DnnlInt8Conv() = default;

namespace {

// x (NC + spatial, uint8 or int8) into `out`: [N][padded spatial][C] uint8, int8 moved to uint8
// by +128, the padding filled with the (moved) zero point. With `lowBits`, also x & 127 there.
template <class T>
void toPaddedChannelsLast(ThreadPool& pool, const ConvProblem& pr, const T* x,
                          std::uint8_t zeroPoint, std::uint8_t* out, std::uint8_t* lowBits) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, N = pr.batch;
    const auto [IZ, IY, IX] = g.input;
    const std::int64_t PZ = paddedInput(g, 0), PY = paddedInput(g, 1), PX = paddedInput(g, 2);
    const std::int64_t total = N * PZ * PY * PX * C;
    const bool padded = total != N * IZ * IY * IX * C;
    if (padded) {
        std::fill_n(out, total, zeroPoint);
        if (lowBits) std::fill_n(lowBits, total, static_cast<std::uint8_t>(zeroPoint & 127));
    }
    const std::uint8_t flip = std::is_signed_v<T> ? 0x80 : 0;
    const std::int64_t plane = IZ * IY * IX;
    pool.parallelFor(N * IZ * IY, 2.0 * IX * C, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t n = item / (IZ * IY), iz = (item / IY) % IZ, iy = item % IY;
            const T* in = x + n * C * plane + (iz * IY + iy) * IX;
            const std::int64_t row =
                (((n * PZ + iz + g.padBegin[0]) * PY + iy + g.padBegin[1]) * PX + g.padBegin[2]) *
                C;
            std::uint8_t* o = out + row;
            for (std::int64_t c = 0; c < C; ++c) {
                const T* line = in + c * plane;
                for (std::int64_t ix = 0; ix < IX; ++ix)
                    o[ix * C + c] =
                        static_cast<std::uint8_t>(static_cast<std::uint8_t>(line[ix]) ^ flip);
            }
            if (lowBits) {
                std::uint8_t* l = lowBits + row;
                for (std::int64_t i = 0; i < IX * C; ++i) l[i] = o[i] & 127;
            }
        }
    });
}

// Adds 128 * w for every source value >= 128 (whose high bit the primitive did not see) to the
// channels-last accumulators.
void addHighBits(ThreadPool& pool, const ConvProblem& pr, const std::uint8_t* source,
                 const std::int8_t* transposed, std::int32_t* acc) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, M = pr.outChannels, N = pr.batch;
    const std::int64_t Cg = pr.inChannelsPerGroup(), Mg = pr.outChannelsPerGroup();
    const std::int64_t taps = g.kernelSize();
    const std::int64_t PY = paddedInput(g, 1), PX = paddedInput(g, 2);
    const std::int64_t PZ = paddedInput(g, 0);
    const auto [OZ, OY, OX] = g.output;
    constexpr std::uint64_t kHigh = 0x8080808080808080ull;
    pool.parallelFor(
        N * OZ * OY, static_cast<double>(OX * taps * C) / 4.0,
        [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t item = begin; item < end; ++item) {
                const std::int64_t n = item / (OZ * OY), oz = (item / OY) % OZ, oy = item % OY;
                for (std::int64_t ox = 0; ox < OX; ++ox) {
                    std::int32_t* out = acc + (item * OX + ox) * M;
                    std::int64_t tap = 0;
                    for (std::int64_t kz = 0; kz < g.kernel[0]; ++kz)
                        for (std::int64_t ky = 0; ky < g.kernel[1]; ++ky)
                            for (std::int64_t kx = 0; kx < g.kernel[2]; ++kx, ++tap) {
                                const std::int64_t iz = oz * g.stride[0] + kz * g.dilation[0];
                                const std::int64_t iy = oy * g.stride[1] + ky * g.dilation[1];
                                const std::int64_t ix = ox * g.stride[2] + kx * g.dilation[2];
                                const std::uint8_t* px =
                                    source + (((n * PZ + iz) * PY + iy) * PX + ix) * C;
                                auto add = [&](std::int64_t channel) {
                                    const std::int64_t group = channel / Cg, c = channel % Cg;
                                    const std::int8_t* w =
                                        transposed + ((group * Cg + c) * taps + tap) * Mg;
                                    std::int32_t* o = out + group * Mg;
                                    for (std::int64_t j = 0; j < Mg; ++j)
                                        o[j] += static_cast<std::int32_t>(w[j]) * 128;
                                };
                                std::int64_t c = 0;
                                for (; c + 8 <= C; c += 8) {
                                    std::uint64_t word;
                                    std::memcpy(&word, px + c, 8);
                                    word &= kHigh;
                                    while (word) {
                                        const int bit = __builtin_ctzll(word);
                                        add(c + bit / 8);
                                        word &= word - 1;
                                    }
                                }
                                for (; c < C; ++c)
                                    if (px[c] & 0x80) add(c);
                            }
                }
            }
        });
}

// The NCHW result from the channels-last accumulators: acc - z * sum(w) (+ intBias), then the
// epilogue's conversion.
template <class Out, class Convert>
void writePlanes(ThreadPool& pool, const ConvProblem& pr, const std::int32_t* acc,
                 std::int32_t zeroPoint, const std::vector<std::int32_t>& sums,
                 const std::int32_t* intBias, Out* y, Convert&& convert) {
    const std::int64_t M = pr.outChannels, N = pr.batch, P = pr.geometry.outputSize();
    constexpr std::int64_t kTile = 32;
    const std::int64_t tiles = (P + kTile - 1) / kTile;
    std::vector<std::int32_t> offset(static_cast<std::size_t>(M));
    for (std::int64_t m = 0; m < M; ++m)
        offset[static_cast<std::size_t>(m)] =
            (intBias ? intBias[m] : 0) - zeroPoint * sums[static_cast<std::size_t>(m)];
    pool.parallelFor(N * tiles, 3.0 * static_cast<double>(kTile * M),
                     [&](std::int64_t begin, std::int64_t end) {
                         for (std::int64_t item = begin; item < end; ++item) {
                             const std::int64_t n = item / tiles, p0 = (item % tiles) * kTile;
                             const std::int64_t count = std::min(kTile, P - p0);
                             const std::int32_t* a = acc + (n * P + p0) * M;
                             for (std::int64_t m = 0; m < M; ++m) {
                                 Out* out = y + (n * M + m) * P + p0;
                                 const std::int32_t off = offset[static_cast<std::size_t>(m)];
                                 for (std::int64_t p = 0; p < count; ++p)
                                     out[p] = convert(a[p * M + m] + off, m);
                                 if constexpr (std::is_same_v<Out, float>)
                                     convert.finish(out, count);
                             }
                         }
                     });
}

struct ToInt32 {
    std::int32_t operator()(std::int32_t v, std::int64_t) const { return v; }
};

struct ToFloat {
    const Int8ConvEpilogue& e;
    float operator()(std::int32_t v, std::int64_t m) const {
        const float scaled = static_cast<float>(v) * e.scale[e.scaleCount == 1 ? 0 : m];
        return e.bias ? scaled + e.bias[m] : scaled;
    }
    void finish(float* out, std::int64_t count) const {
        if (!e.activation.none()) e.activation.applyInPlace(out, count);
    }
};

template <class Q>
struct ToQuantized {
    const Int8ConvEpilogue& e;
    Q operator()(std::int32_t v, std::int64_t m) const {
        constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
        const float scaled = static_cast<float>(v) * e.scale[e.scaleCount == 1 ? 0 : m];
        const double q = std::nearbyint(static_cast<double>(scaled)) + e.outputZeroPoint;
        return static_cast<Q>(std::clamp(q, lo, hi));
    }
};

}  // namespace

bool DnnlInt8Conv::run(ThreadPool& pool, const ConvProblem& pr, const Tensor& x,
                       std::int32_t xZeroPoint, const Tensor& w, const Int8ConvEpilogue& epilogue,
                       Tensor& y) {
    const bool signedSource = x.dtype() == DataType::Int8;
    if (!signedSource && x.dtype() != DataType::UInt8) return false;
    if (w.dtype() != DataType::Int8) return false;
    const WindowGeometry& g = pr.geometry;
    if (pr.batch <= 0 || pr.inChannels <= 0 || pr.outChannels <= 0 || pr.groups <= 0 ||
        g.outputSize() <= 0 || g.inputSize() <= 0 || g.spatialRank < 1 ||
        g.spatialRank > kMaxWindowRank)
        return false;
    for (int s = 0; s < kMaxWindowRank; ++s)
        if (g.padBegin[s] < 0 || g.padEnd[s] < 0) return false;
    const std::int64_t M = pr.outChannels;
    if (epilogue.output != Int8ConvEpilogue::Output::Int32 &&
        (!epilogue.scale || (epilogue.scaleCount != 1 && epilogue.scaleCount != M)))
        return false;
    switch (epilogue.output) {
        case Int8ConvEpilogue::Output::Int32:
            if (y.dtype() != DataType::Int32) return false;
            break;
        case Int8ConvEpilogue::Output::Float:
            if (y.dtype() != DataType::Float) return false;
            break;
        case Int8ConvEpilogue::Output::Quantized:
            if (y.dtype() != DataType::UInt8 && y.dtype() != DataType::Int8) return false;
            break;
    }
    const std::int32_t lo = signedSource ? -128 : 0, hi = signedSource ? 127 : 255;
    if (xZeroPoint < lo || xZeroPoint > hi) return false;

    State& s = *state_;
    std::lock_guard lock(s.mutex);
    if (!s.prepare(pr)) return false;
    dnnl::memory weights = s.weightsFor(pr, w);

    const std::int32_t zeroPoint = xZeroPoint + (signedSource ? 128 : 0);
    Scratch& buffers = scratch();
    const std::size_t sourceSize = s.srcDesc.get_size();
    buffers.source.resize(sourceSize);
    if (!s.exact) buffers.lowBits.resize(sourceSize);
    std::uint8_t* lowBits = s.exact ? nullptr : buffers.lowBits.data();
    const auto zp = static_cast<std::uint8_t>(zeroPoint);
    if (signedSource)
        toPaddedChannelsLast(pool, pr, x.data<std::int8_t>(), zp, buffers.source.data(), lowBits);
    else
        toPaddedChannelsLast(pool, pr, x.data<std::uint8_t>(), zp, buffers.source.data(), lowBits);
    buffers.acc.resize(s.dstDesc.get_size() / sizeof(std::int32_t));

    dnnl::memory src(s.srcDesc, s.engine, s.exact ? buffers.source.data() : lowBits);
    dnnl::memory dst(s.dstDesc, s.engine, buffers.acc.data());
    s.primitive->execute(s.stream,
                         {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    s.stream.wait();
    if (!s.exact)
        addHighBits(pool, pr, buffers.source.data(), s.transposed.data(), buffers.acc.data());

    const std::int32_t* acc = buffers.acc.data();
    switch (epilogue.output) {
        case Int8ConvEpilogue::Output::Int32:
            writePlanes(pool, pr, acc, zeroPoint, s.channelSums, epilogue.intBias,
                        y.data<std::int32_t>(), ToInt32{});
            break;
        case Int8ConvEpilogue::Output::Float:
            writePlanes(pool, pr, acc, zeroPoint, s.channelSums, epilogue.intBias, y.data<float>(),
                        ToFloat{epilogue});
            break;
        case Int8ConvEpilogue::Output::Quantized:
            if (y.dtype() == DataType::UInt8)
                writePlanes(pool, pr, acc, zeroPoint, s.channelSums, epilogue.intBias,
                            y.data<std::uint8_t>(), ToQuantized<std::uint8_t>{epilogue});
            else
                writePlanes(pool, pr, acc, zeroPoint, s.channelSums, epilogue.intBias,
                            y.data<std::int8_t>(), ToQuantized<std::int8_t>{epilogue});
            break;
    }
    return true;
}

#else

struct DnnlInt8Conv::State {};
DnnlInt8Conv::DnnlInt8Conv() = default;
DnnlInt8Conv::~DnnlInt8Conv() = default;
bool DnnlInt8Conv::exactDotProducts() { return true; }
bool DnnlInt8Conv::run(ThreadPool&, const ConvProblem&, const Tensor&, std::int32_t, const Tensor&,
                       const Int8ConvEpilogue&, Tensor&) {
    return false;
}

#endif

}  // namespace onnxlens::engine::ops
