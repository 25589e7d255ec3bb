#include "DnnlInt8Conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>

#include "DnnlInt8Saturation.h"
#include "OpenMpThreads.h"
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
    std::vector<std::uint8_t> staged, source, lowBits, quantized;
    std::vector<std::int32_t> acc, highAcc;
    std::vector<float> values;
};

Scratch& scratch() {
    thread_local Scratch s;
    return s;
}

// The padded spatial size of dim s (the primitive runs unpadded on it).
std::int64_t paddedInput(const WindowGeometry& g, int s) {
    return g.input[s] + g.padBegin[s] + g.padEnd[s];
}

// A reorder between the NC... layout and channels-last of one tensor shape and type.
struct Reorder {
    dnnl::memory::desc from, to;
    dnnl::reorder primitive;
    Reorder(const dnnl::engine& engine, const dnnl::memory::dims& dims, dt type, bool toLast) {
        const int r = static_cast<int>(dims.size()) - 3;
        const tag plainTags[] = {tag::ncw, tag::nchw, tag::ncdhw};
        const tag lastTags[] = {tag::nwc, tag::nhwc, tag::ndhwc};
        from = dnnl::memory::desc(dims, type, toLast ? plainTags[r] : lastTags[r]);
        to = dnnl::memory::desc(dims, type, toLast ? lastTags[r] : plainTags[r]);
        primitive = dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
    }
    void run(const dnnl::engine& engine, dnnl::stream& stream, const void* in, void* out) {
        dnnl::memory src(from, engine, const_cast<void*>(in)), dst(to, engine, out);
        primitive.execute(stream, src, dst);
        stream.wait();
    }
};

}  // namespace

struct DnnlInt8Conv::State {
    std::mutex mutex;
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    const bool exact = !dnnlInt8PairsSaturate();

    std::vector<std::int64_t> key;
    std::unique_ptr<dnnl::convolution_forward> primitive;
    dnnl::memory::desc srcDesc, dstDesc, userWeightsDesc, weightsDesc;
    // Layout changes around the primitive (oneDNN's JIT reorders), made on first use per type:
    // the NC... source to channels-last (unpadded), the channels-last result to NC...
    std::map<int, Reorder> sourceReorders, resultReorders;
    bool refused = false;  // the key's problem is one oneDNN does not implement

    // The weights the primitive reads, made from `heldWeights` (kept so that the same storage
    // coming back means the same values), the sum of each output channel's weights, and (without
    // VNNI) the weights transposed to [C][taps][M/G] for the high-bit pass.
    Tensor heldWeights;
    dnnl::memory reordered;
    std::vector<std::int32_t> channelSums;
    std::vector<std::int8_t> transposed;
    // Every weight in [-64, 64] (quantize_static's reduce_range, ONNX Runtime's advice for CPUs
    // without VNNI): then a pair of u8 x s8 products stays inside int16 (255 * 64 * 2 = 32,640) and
    // the primitive's result is exact on the whole 8-bit source, in one convolution.
    bool sevenBitWeights = false;

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
        sourceReorders.clear();
        resultReorders.clear();
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

    // x (NC + spatial, `type`) into channels-last `out` of the same type, unpadded.
    void stageSource(const ConvProblem& pr, dt type, const void* x, void* out) {
        auto it = sourceReorders.find(static_cast<int>(type));
        if (it == sourceReorders.end()) {
            dnnl::memory::dims dims{pr.batch, pr.inChannels};
            const WindowGeometry& g = pr.geometry;
            for (int s = kMaxWindowRank - g.spatialRank; s < kMaxWindowRank; ++s)
                dims.push_back(g.input[s]);
            it = sourceReorders.emplace(static_cast<int>(type), Reorder(engine, dims, type, true))
                     .first;
        }
        it->second.run(engine, stream, x, out);
    }

    // The channels-last result `in` (`type`) into y (NC + spatial).
    void writeResult(dt type, const void* in, void* y) {
        auto it = resultReorders.find(static_cast<int>(type));
        if (it == resultReorders.end())
            it = resultReorders
                     .emplace(static_cast<int>(type), Reorder(engine, dstDesc.dims(), type, false))
                     .first;
        it->second.run(engine, stream, in, y);
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
        sevenBitWeights = std::all_of(data, data + M * perChannel,
                                      [](std::int8_t v) { return v >= -64 && v <= 64; });
        if (!exact && !sevenBitWeights) {
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

// The staged channels-last source (unpadded, x's own type) into `out`: [N][padded spatial][C]
// uint8, int8 moved to uint8 by +128 (xor 0x80), the padding filled with the (moved) zero point.
void padChannelsLast(const ConvProblem& pr, const std::uint8_t* staged, std::uint8_t flip,
                     std::uint8_t zeroPoint, std::uint8_t* out) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, N = pr.batch;
    const auto [IZ, IY, IX] = g.input;
    const std::int64_t PZ = paddedInput(g, 0), PY = paddedInput(g, 1), PX = paddedInput(g, 2);
    const bool padded = PZ != IZ || PY != IY || PX != IX;
    if (padded) std::fill_n(out, N * PZ * PY * PX * C, zeroPoint);
    const std::int64_t rowBytes = IX * C;
    // Memory-bound: one thread (a parallel region costs more than it saves, and much more on a
    // loaded machine where every region waits for its threads to be scheduled).
    for (std::int64_t item = 0; item < N * IZ * IY; ++item) {
        const std::int64_t n = item / (IZ * IY), iz = (item / IY) % IZ, iy = item % IY;
        const std::uint8_t* __restrict__ in = staged + item * rowBytes;
        std::uint8_t* __restrict__ o =
            out +
            (((n * PZ + iz + g.padBegin[0]) * PY + iy + g.padBegin[1]) * PX + g.padBegin[2]) * C;
        for (std::int64_t i = 0; i < rowBytes; ++i) o[i] = in[i] ^ flip;
    }
}

// lowBits = source & 127; returns how many source bytes have the high bit (memory-bound: one
// thread).
std::int64_t splitLowBits(const std::uint8_t* __restrict__ source,
                          std::uint8_t* __restrict__ lowBits, std::int64_t size) {
    std::int64_t high = 0;
    for (std::int64_t i = 0; i < size; ++i) {
        lowBits[i] = source[i] & 127;
        high += source[i] >> 7;
    }
    return high;
}

// highBits = source >> 7 (0 or 1).
void highBitPlane(const std::uint8_t* __restrict__ source, std::uint8_t* __restrict__ highBits,
                  std::int64_t size) {
    for (std::int64_t i = 0; i < size; ++i) highBits[i] = source[i] >> 7;
}

// Adds 128 * w for every source value >= 128 (whose high bit the primitive did not see) to the
// channels-last accumulators: the sparse form, for sources with few such values.
void addHighBits(ThreadPool& pool, const ConvProblem& pr, const std::uint8_t* source,
                 const std::int8_t* transposed, std::int32_t* acc) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, M = pr.outChannels, N = pr.batch;
    const std::int64_t Cg = pr.inChannelsPerGroup(), Mg = pr.outChannelsPerGroup();
    const std::int64_t taps = g.kernelSize();
    const std::int64_t PY = paddedInput(g, 1), PX = paddedInput(g, 2);
    const std::int64_t PZ = paddedInput(g, 0);
    const std::int64_t OZ = g.output[0], OY = g.output[1], OX = g.output[2];
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
                                    const std::int8_t* __restrict__ w =
                                        transposed + ((group * Cg + c) * taps + tap) * Mg;
                                    std::int32_t* __restrict__ o = out + group * Mg;
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

// Per output channel: what is added to the accumulators (intBias - z * sum(w)).
std::vector<std::int32_t> channelOffsets(const std::vector<std::int32_t>& sums,
                                         std::int32_t zeroPoint, const std::int32_t* intBias) {
    std::vector<std::int32_t> offset(sums.size());
    for (std::size_t m = 0; m < sums.size(); ++m)
        offset[m] = (intBias ? intBias[m] : 0) - zeroPoint * sums[m];
    return offset;
}

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
    // The source channels-last (oneDNN's reorder), then padded with the zero point and moved to
    // uint8 in one pass over the rows.
    const std::int64_t stagedSize = x.numel();
    const std::int64_t sourceSize = static_cast<std::int64_t>(s.srcDesc.get_size());
    buffers.staged.resize(static_cast<std::size_t>(stagedSize));
    buffers.source.resize(static_cast<std::size_t>(sourceSize));
    // The layout changes and the byte passes are memory-bound: one thread. Every parallel region
    // is a barrier, and on a loaded machine each waits for its threads to be scheduled (measured:
    // ResNet-50 int8 at 2 threads, load 5, 4.2 s with them parallel).
    const int threads = pool.threads();
    auto oneThread = [&](auto&& work) {
        if (threads > 1) applyThreadCountToCallingThread(1);
        work();
        if (threads > 1) applyThreadCountToCallingThread(threads);
    };
    oneThread(
        [&] { s.stageSource(pr, signedSource ? dt::s8 : dt::u8, x.raw(), buffers.staged.data()); });
    padChannelsLast(pr, buffers.staged.data(), signedSource ? 0x80 : 0,
                    static_cast<std::uint8_t>(zeroPoint), buffers.source.data());
    const std::int64_t P = g.outputSize(), N = pr.batch;
    buffers.acc.resize(static_cast<std::size_t>(N * P * M));
    std::int32_t* acc = buffers.acc.data();

    auto convolve = [&](std::uint8_t* source, std::int32_t* result) {
        dnnl::memory src(s.srcDesc, s.engine, source);
        dnnl::memory dst(s.dstDesc, s.engine, result);
        s.primitive->execute(
            s.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
        s.stream.wait();
    };
    if (s.exact || s.sevenBitWeights) {
        convolve(buffers.source.data(), acc);
    } else {
        // 7-bit source for the primitive, the high bit added back: sparsely when few values have
        // it, else as a second convolution of the 0/1 high-bit plane.
        buffers.lowBits.resize(static_cast<std::size_t>(sourceSize));
        const std::int64_t high =
            splitLowBits(buffers.source.data(), buffers.lowBits.data(), sourceSize);
        convolve(buffers.lowBits.data(), acc);
        if (high * 8 > sourceSize) {
            highBitPlane(buffers.source.data(), buffers.lowBits.data(), sourceSize);
            buffers.highAcc.resize(buffers.acc.size());
            convolve(buffers.lowBits.data(), buffers.highAcc.data());
            const std::int32_t* __restrict__ h = buffers.highAcc.data();
            std::int32_t* __restrict__ a = acc;
            for (std::int64_t i = 0; i < N * P * M; ++i) a[i] += h[i] * 128;
        } else if (high > 0) {
            addHighBits(pool, pr, buffers.source.data(), s.transposed.data(), acc);
        }
    }

    // The epilogue on the channels-last accumulators (contiguous per pixel), then oneDNN's reorder
    // to NC... into y.
    const std::vector<std::int32_t> offset =
        channelOffsets(s.channelSums, zeroPoint, epilogue.intBias);
    const std::int32_t* off = offset.data();
    const float* scale = epilogue.scale;
    const bool oneScale = epilogue.scaleCount == 1;
    switch (epilogue.output) {
        case Int8ConvEpilogue::Output::Int32:
            for (std::int64_t p = 0; p < N * P; ++p) {
                std::int32_t* __restrict__ a = acc + p * M;
                for (std::int64_t m = 0; m < M; ++m) a[m] += off[m];
            }
            oneThread([&] { s.writeResult(dt::s32, acc, y.raw()); });
            break;
        case Int8ConvEpilogue::Output::Float: {
            buffers.values.resize(static_cast<std::size_t>(N * P * M));
            float* values = buffers.values.data();
            std::vector<float> scales(static_cast<std::size_t>(M)),
                biases(static_cast<std::size_t>(M), 0.0f);
            for (std::int64_t m = 0; m < M; ++m) {
                scales[static_cast<std::size_t>(m)] = scale[oneScale ? 0 : m];
                if (epilogue.bias) biases[static_cast<std::size_t>(m)] = epilogue.bias[m];
            }
            const float* sc = scales.data();
            const float* bi = biases.data();
            const bool relu = epilogue.activation.kind == FusedActivation::Kind::Relu;
            const bool hasBias = epilogue.bias != nullptr;
            // Per pixel, on one thread (memory-bound, like the reorders).
            [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t p = b; p < e; ++p) {
                    const std::int32_t* __restrict__ a = acc + p * M;
                    float* __restrict__ v = values + p * M;
                    // Cast, scale, bias: the unfused graph's order.
                    if (hasBias)
                        for (std::int64_t m = 0; m < M; ++m)
                            v[m] = static_cast<float>(a[m] + off[m]) * sc[m] + bi[m];
                    else
                        for (std::int64_t m = 0; m < M; ++m)
                            v[m] = static_cast<float>(a[m] + off[m]) * sc[m];
                    if (relu)
                        for (std::int64_t m = 0; m < M; ++m) v[m] = v[m] > 0.0f ? v[m] : 0.0f;
                    else
                        epilogue.activation.applyInPlace(v, M);
                }
            }(0, N * P);
            oneThread([&] { s.writeResult(dt::f32, values, y.raw()); });
            break;
        }
        case Int8ConvEpilogue::Output::Quantized: {
            buffers.quantized.resize(static_cast<std::size_t>(N * P * M));
            std::uint8_t* q = buffers.quantized.data();
            const bool signedY = y.dtype() == DataType::Int8;
            const double lo = signedY ? -128.0 : 0.0, hi = signedY ? 127.0 : 255.0;
            const std::int32_t yzp = epilogue.outputZeroPoint;
            [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t p = b; p < e; ++p)
                    for (std::int64_t m = 0; m < M; ++m) {
                        const float scaled =
                            static_cast<float>(acc[p * M + m] + off[m]) * scale[oneScale ? 0 : m];
                        const double v =
                            std::clamp(std::nearbyint(static_cast<double>(scaled)) + yzp, lo, hi);
                        q[p * M + m] = static_cast<std::uint8_t>(static_cast<int>(v) & 0xff);
                    }
            }(0, N * P);
            oneThread([&] { s.writeResult(signedY ? dt::s8 : dt::u8, q, y.raw()); });
            break;
        }
    }
    return true;
}

#else

struct DnnlInt8Conv::State {};
DnnlInt8Conv::DnnlInt8Conv() = default;
DnnlInt8Conv::~DnnlInt8Conv() = default;
bool DnnlInt8Conv::run(ThreadPool&, const ConvProblem&, const Tensor&, std::int32_t, const Tensor&,
                       const Int8ConvEpilogue&, Tensor&) {
    return false;
}

#endif

}  // namespace onnxlens::engine::ops
