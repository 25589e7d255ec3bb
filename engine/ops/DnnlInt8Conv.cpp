#include "DnnlInt8Conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>

#include "ByteTranspose.h"
#include "DnnlCallArgs.h"
#include "DnnlInt8Saturation.h"
#include "Int8DepthwiseConv.h"
#include "Int8Requantizer.h"
#include "OpenMpThreads.h"
#include "onnxlens/engine/WeightMemory.h"
#endif

namespace onnxlens::engine::ops {

#ifdef ONNXLENS_WITH_DNNL

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// A buffer that grows to the largest size asked of it and leaves its contents as they are: each
// layer overwrites what it uses, and std::vector's resize would zero every byte it grows by (on
// a model whose layers alternate between small and large, megabytes per layer).
template <class T>
class GrowingBuffer {
  public:
    T* get(std::int64_t count) {
        const auto n = static_cast<std::size_t>(count);
        if (n > capacity_) {
            data_ = std::make_unique_for_overwrite<T[]>(n);
            capacity_ = n;
        }
        return data_.get();
    }

  private:
    std::unique_ptr<T[]> data_;
    std::size_t capacity_ = 0;
};

// The channels-last source and the accumulators of one run, kept per calling thread: the largest
// layer's, not one set per node.
struct Scratch {
    GrowingBuffer<std::uint8_t> source, lowBits, quantized;
    GrowingBuffer<std::int32_t> acc, highAcc;
    GrowingBuffer<float> values;
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
    DnnlCallArgs call;
    Reorder(const dnnl::engine& engine, const dnnl::memory::dims& dims, dt type, bool toLast) {
        const int r = static_cast<int>(dims.size()) - 3;
        const tag plainTags[] = {tag::ncw, tag::nchw, tag::ncdhw};
        const tag lastTags[] = {tag::nwc, tag::nhwc, tag::ndhwc};
        from = dnnl::memory::desc(dims, type, toLast ? plainTags[r] : lastTags[r]);
        to = dnnl::memory::desc(dims, type, toLast ? lastTags[r] : plainTags[r]);
        const dnnl::reorder::primitive_desc pd(engine, from, engine, to, userScratchpad());
        primitive = dnnl::reorder(pd);
        call.add(DNNL_ARG_FROM, from, engine);
        call.add(DNNL_ARG_TO, to, engine);
        call.addScratchpad(pd.scratchpad_desc(), engine);
    }
    void run(dnnl::stream& stream, const void* in, void* out) {
        call.execute(primitive, stream, {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, out}});
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
    DnnlCallArgs call;  // the primitive's arguments, pointed at each call's buffers
    // The channels-last int32 or float result to NC... (oneDNN's JIT reorders), made on first
    // use per type. The 8-bit source and result move with transposeBytes (ByteTranspose.h):
    // oneDNN's u8 reorders to and from channels-last ran at under 1 GB/s.
    std::map<int, Reorder> resultReorders;
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
    // The largest sum of |w| over one output channel's weights: 255 times it bounds |acc|.
    std::int64_t largestAbsoluteSum = 0;

    // The primitive that requantizes in its own epilogue (requantizesExactly), for `fusedScales`
    // and an output of `fusedType`; fusedRefused when oneDNN has only a slow kernel for it.
    std::unique_ptr<dnnl::convolution_forward> fused;
    dnnl::memory::desc fusedDst, fusedBias;
    DnnlCallArgs fusedCall;
    std::vector<float> fusedScales;
    dt fusedType = dt::u8;
    bool fusedRefused = false;

    // The engine's own depthwise kernel's weights (Int8DepthwiseConv.h), made from `heldDepthwise`.
    Tensor heldDepthwise;
    std::unique_ptr<DepthwiseWeights> depthwise;

    // Padding in the primitive (nativePadding) or in the staged source.
    dnnl::memory::dims padBegin, padEnd;

    static std::vector<std::int64_t> keyOf(const ConvProblem& pr, bool nativePadding) {
        const WindowGeometry& g = pr.geometry;
        // The team is part of it: oneDNN fixes a primitive's thread count when it is made.
        std::vector<std::int64_t> key{pr.batch,
                                      pr.inChannels,
                                      pr.outChannels,
                                      pr.groups,
                                      g.spatialRank,
                                      nativePadding ? 1 : 0,
                                      threadCountOfCallingThread()};
        for (int s = 0; s < kMaxWindowRank; ++s)
            key.insert(key.end(),
                       {paddedInput(g, s), g.output[s], g.kernel[s], g.stride[s], g.dilation[s]});
        return key;
    }

    // The primitive for `pr`, reading the source unpadded (staged with its padding) or, with
    // `nativePadding`, as it is, oneDNN padding it with zeros (right when the zero point is 0).
    bool prepare(const ConvProblem& pr, bool nativePadding) {
        std::vector<std::int64_t> k = keyOf(pr, nativePadding);
        if (k == key) return !refused;
        key = std::move(k);
        primitive.reset();
        fused.reset();
        fusedScales.clear();
        fusedRefused = false;
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
        for (auto d :
             spatial([&](int s) { return nativePadding ? g.input[s] : paddedInput(g, s); }))
            srcDims.push_back(d);
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
        padBegin = spatial([&](int s) { return nativePadding ? g.padBegin[s] : 0; });
        padEnd = spatial([&](int s) { return nativePadding ? g.padEnd[s] : 0; });
        try {
            auto operation = dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, srcDesc,
                anyWeights, dnnl::memory::desc(), dstDesc, strides, dilations, padBegin, padEnd);
            dnnl::convolution_forward::primitive_desc pd(operation, userScratchpad(), engine);
            weightsDesc = pd.weights_desc();
            primitive = std::make_unique<dnnl::convolution_forward>(pd);
            call = DnnlCallArgs();
            call.add(DNNL_ARG_SRC, srcDesc, engine);
            call.add(DNNL_ARG_WEIGHTS, weightsDesc, engine);
            call.add(DNNL_ARG_DST, dstDesc, engine);
            call.addScratchpad(pd.scratchpad_desc(), engine);
        } catch (const dnnl::error&) {
            refused = true;
        }
        return !refused;
    }

    // The primitive of `key` with oneDNN's own requantization: dst = saturate(round((float(acc)
    // + bias) * scale)) in `type`, scales per channel or one. Null when oneDNN has only its
    // reference kernel for it (or none).
    dnnl::convolution_forward* fusedFor(const ConvProblem& pr, const std::vector<float>& scales,
                                        dt type) {
        if (fused && fusedScales == scales && fusedType == type) return fused.get();
        if (fusedRefused && fusedScales == scales && fusedType == type) return nullptr;
        fused.reset();
        fusedScales = scales;
        fusedType = type;
        fusedRefused = true;
        const WindowGeometry& g = pr.geometry;
        const int offset = kMaxWindowRank - g.spatialRank;
        dnnl::memory::dims strides, dilations;
        for (int s = offset; s < kMaxWindowRank; ++s) {
            strides.push_back(g.stride[s]);
            dilations.push_back(g.dilation[s] - 1);
        }
        const tag lastTags[] = {tag::nwc, tag::nhwc, tag::ndhwc};
        fusedDst = dnnl::memory::desc(dstDesc.dims(), type, lastTags[g.spatialRank - 1]);
        fusedBias = dnnl::memory::desc({pr.outChannels}, dt::f32, tag::x);
        dnnl::primitive_attr attributes;
        attributes.set_output_scales(scales.size() == 1 ? 0 : 2, scales);
        try {
            auto operation = dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, srcDesc,
                weightsDesc, fusedBias, fusedDst, strides, dilations, padBegin, padEnd);
            dnnl::convolution_forward::primitive_desc pd(operation, userScratchpad(attributes),
                                                         engine);
            if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
            fused = std::make_unique<dnnl::convolution_forward>(pd);
            fusedCall = DnnlCallArgs();
            fusedCall.add(DNNL_ARG_SRC, srcDesc, engine);
            fusedCall.add(DNNL_ARG_WEIGHTS, weightsDesc, engine);
            fusedCall.add(DNNL_ARG_BIAS, fusedBias, engine);
            fusedCall.add(DNNL_ARG_DST, fusedDst, engine);
            fusedCall.addScratchpad(pd.scratchpad_desc(), engine);
        } catch (const dnnl::error&) {
            return nullptr;
        }
        fusedRefused = false;
        return fused.get();
    }

    // The channels-last result `in` (`type`) into y (NC + spatial).
    void writeResult(dt type, const void* in, void* y) {
        auto it = resultReorders.find(static_cast<int>(type));
        if (it == resultReorders.end())
            it = resultReorders
                     .emplace(static_cast<int>(type), Reorder(engine, dstDesc.dims(), type, false))
                     .first;
        it->second.run(stream, in, y);
    }

    // Whether every weight is in [-64, 64] (see sevenBitWeights).
    static bool allSevenBit(const std::int8_t* data, std::int64_t count) {
        return std::all_of(data, data + count, [](std::int8_t v) { return v >= -64 && v <= 64; });
    }

    // sevenBitWeights for w, before weightsFor has seen it.
    bool sevenBitFor(const Tensor& w) const {
        if (reordered && w.sharesStorageWith(heldWeights)) return sevenBitWeights;
        return allSevenBit(w.data<std::int8_t>(), w.numel());
    }

    dnnl::memory weightsFor(const ConvProblem& pr, const Tensor& w) {
        if (reordered && w.sharesStorageWith(heldWeights)) return reordered;
        const std::int8_t* data = w.data<std::int8_t>();
        const std::int64_t M = pr.outChannels, Mg = pr.outChannelsPerGroup();
        const std::int64_t Cg = pr.inChannelsPerGroup(), taps = pr.geometry.kernelSize();
        const std::int64_t perChannel = Cg * taps;
        channelSums.assign(static_cast<std::size_t>(M), 0);
        largestAbsoluteSum = 0;
        for (std::int64_t m = 0; m < M; ++m) {
            std::int64_t sum = 0, absolute = 0;
            for (std::int64_t i = 0; i < perChannel; ++i) {
                sum += data[m * perChannel + i];
                absolute += std::abs(static_cast<std::int32_t>(data[m * perChannel + i]));
            }
            // Modulo 2^32, as the int32 accumulators it is taken from.
            channelSums[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(sum);
            largestAbsoluteSum = std::max(largestAbsoluteSum, absolute);
        }
        sevenBitWeights = allSevenBit(data, M * perChannel);
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

// x (8-bit, [N][C][spatial...], or [N][spatial...][C] when `channelsLast`) into `out`:
// [N][padded spatial][C] uint8, int8 moved to uint8 by +128 (xor 0x80), the padding filled with
// the (moved) zero point. One pass: each input row's C x IX bytes transposed (or copied) into
// place, only the padding written besides.
void stageChannelsLast(ThreadPool& pool, const ConvProblem& pr, const std::uint8_t* x,
                       bool channelsLast, std::uint8_t flip, std::uint8_t zeroPoint,
                       std::uint8_t* out) {
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, N = pr.batch;
    // Not a structured binding: clang 14 does not let a lambda capture one.
    const std::int64_t IZ = g.input[0], IY = g.input[1], IX = g.input[2];
    const std::int64_t PZ = paddedInput(g, 0), PY = paddedInput(g, 1), PX = paddedInput(g, 2);
    const std::int64_t plane = IZ * IY * IX, rowBytes = PX * C;
    // Rows over the threads (the pool runs small layers on one).
    pool.parallelFor(
        N * PZ * PY, static_cast<double>(rowBytes), [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t item = b; item < e; ++item) {
                const std::int64_t n = item / (PZ * PY), pz = (item / PY) % PZ, py = item % PY;
                std::uint8_t* row = out + item * rowBytes;
                const std::int64_t iz = pz - g.padBegin[0], iy = py - g.padBegin[1];
                if (iz < 0 || iz >= IZ || iy < 0 || iy >= IY) {
                    std::memset(row, zeroPoint, static_cast<std::size_t>(rowBytes));
                    continue;
                }
                const std::int64_t left = g.padBegin[2] * C, right = (g.padBegin[2] + IX) * C;
                std::memset(row, zeroPoint, static_cast<std::size_t>(left));
                std::memset(row + right, zeroPoint, static_cast<std::size_t>(rowBytes - right));
                if (!channelsLast) {
                    transposeBytes(x + n * C * plane + (iz * IY + iy) * IX, C, IX, plane,
                                   row + left, C, flip);
                    continue;
                }
                // Locals: a byte store may alias the captured ones, which would keep the loop
                // from being vectorised.
                const std::uint8_t* __restrict__ in = x + ((n * IZ + iz) * IY + iy) * IX * C;
                std::uint8_t* __restrict__ o = row + left;
                const std::int64_t count = IX * C;
                const std::uint8_t bits = flip;
                if (bits == 0)
                    std::memcpy(o, in, static_cast<std::size_t>(count));
                else
                    for (std::int64_t i = 0; i < count; ++i) o[i] = in[i] ^ bits;
            }
        });
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
        offset[m] =
            wrappingSum(intBias ? intBias[m] : 0,
                        static_cast<std::int32_t>(-static_cast<std::int64_t>(zeroPoint) * sums[m]));
    return offset;
}

// The epilogue's scale of each of the M output channels (it holds one or M).
std::vector<float> channelScales(const Int8ConvEpilogue& epilogue, std::int64_t M) {
    std::vector<float> scales(static_cast<std::size_t>(M));
    for (std::int64_t m = 0; m < M; ++m)
        scales[static_cast<std::size_t>(m)] = epilogue.scale[epilogue.scaleCount == 1 ? 0 : m];
    return scales;
}

// Whether every integer of (acc + offset[m]), |acc| <= 255 * largestAbsoluteSum, is exact in
// float (at most 2^24 in magnitude).
bool requantizesExactly(std::int64_t largestAbsoluteSum, const std::vector<std::int32_t>& offset) {
    constexpr std::int64_t kExactInFloat = std::int64_t{1} << 24;
    std::int64_t largestOffset = 0;
    for (std::int32_t o : offset)
        largestOffset = std::max(largestOffset, std::abs(static_cast<std::int64_t>(o)));
    return 255 * largestAbsoluteSum + largestOffset <= kExactInFloat;
}

}  // namespace

bool DnnlInt8Conv::run(ThreadPool& pool, const ConvProblem& pr, const Tensor& x,
                       std::int32_t xZeroPoint, const Tensor& w, const Int8ConvEpilogue& epilogue,
                       Tensor& y, bool channelsLast) {
    if (channelsLast && epilogue.output != Int8ConvEpilogue::Output::Quantized) return false;
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
    if (channelsLast && epilogue.output == Int8ConvEpilogue::Output::Quantized &&
        depthwiseKernelTakes(pr) && w.numel() == M * g.kernelSize()) {
        runDepthwise(pool, pr, x, xZeroPoint, w, epilogue, y);
        return true;
    }
    // The primitive is made and run on the threads its work is worth.
    const ThreadBudget budget(2.0 * static_cast<double>(pr.batch * M * g.outputSize()) *
                              static_cast<double>(pr.inChannelsPerGroup() * g.kernelSize()));
    const std::int32_t zeroPoint = xZeroPoint + (signedSource ? 128 : 0);
    const bool unpadded =
        std::all_of(g.padBegin.begin(), g.padBegin.end(), [](std::int64_t p) { return p == 0; }) &&
        std::all_of(g.padEnd.begin(), g.padEnd.end(), [](std::int64_t p) { return p == 0; });
    // A channels-last uint8 source is already what the primitive reads (the passes below only
    // read it) when it has no padding, or when its zero point is 0 (a ReLU's output) and one
    // convolution gives the exact sum: then oneDNN's own zero padding is the zero point's.
    const bool nativePadding = channelsLast && !signedSource && !unpadded && zeroPoint == 0 &&
                               (s.exact || s.sevenBitFor(w));
    if (!s.prepare(pr, nativePadding)) return false;
    const void* weights = s.weightsFor(pr, w).get_data_handle();

    Scratch& buffers = scratch();
    const std::int64_t sourceSize = static_cast<std::int64_t>(s.srcDesc.get_size());
    const bool readInPlace = channelsLast && !signedSource && (unpadded || nativePadding);
    std::uint8_t* source = readInPlace ? static_cast<std::uint8_t*>(const_cast<void*>(x.raw()))
                                       : buffers.source.get(sourceSize);
    // oneDNN's reorders of int32 and float results run on one thread (memory-bound; every parallel
    // region is a barrier). The source pass and the requantizing epilogue go through the pool,
    // which keeps small layers on one thread: measured on an idle 2-core Zen 3, a QOperator
    // MobileNetV2 ran 20.6 ms at 2 threads with every byte pass on one thread, 9-10 ms so.
    auto oneThread = [](auto&& work) {
        const SerialRegion serial;
        work();
    };
    if (!readInPlace)
        stageChannelsLast(pool, pr, static_cast<const std::uint8_t*>(x.raw()), channelsLast,
                          signedSource ? 0x80 : 0, static_cast<std::uint8_t>(zeroPoint), source);
    const std::int64_t P = g.outputSize(), N = pr.batch;
    const std::vector<std::int32_t> offset =
        channelOffsets(s.channelSums, zeroPoint, epilogue.intBias);
    const std::int32_t* off = offset.data();
    const float* scale = epilogue.scale;

    // Output zero point 0 (a ReLU's output, symmetric int8): oneDNN requantizes in its own
    // epilogue, from registers, with the per-channel offset as a float bias: y = saturate(round(
    // (float(acc) + float(offset)) * scale)). That is the requantization below, exactly, when
    // every integer involved is at most 2^24 (exact in float, so the float sum is the integer
    // sum): |acc| <= 255 * sum|w| of the channel. With another zero point oneDNN would round
    // x + zero point, not x, and ties would differ from ONNX's round(x) + zero point.
    if (epilogue.output == Int8ConvEpilogue::Output::Quantized && epilogue.outputZeroPoint == 0 &&
        (s.exact || s.sevenBitWeights) && requantizesExactly(s.largestAbsoluteSum, offset) &&
        std::all_of(scale, scale + epilogue.scaleCount, [](float v) { return std::isfinite(v); })) {
        const std::vector<float> scales(scale, scale + epilogue.scaleCount);
        const dt type = y.dtype() == DataType::Int8 ? dt::s8 : dt::u8;
        if (dnnl::convolution_forward* fused = s.fusedFor(pr, scales, type)) {
            std::vector<float> bias(offset.begin(), offset.end());
            auto* out = static_cast<std::uint8_t*>(y.raw());
            std::uint8_t* result = channelsLast ? out : buffers.quantized.get(N * P * M);
            s.fusedCall.execute(*fused, s.stream,
                                {{DNNL_ARG_SRC, source},
                                 {DNNL_ARG_WEIGHTS, weights},
                                 {DNNL_ARG_BIAS, bias.data()},
                                 {DNNL_ARG_DST, result}});
            s.stream.wait();
            if (!channelsLast)
                pool.parallelFor(
                    N, static_cast<double>(P * M), [&](std::int64_t b, std::int64_t e) {
                        for (std::int64_t n = b; n < e; ++n)
                            transposeBytes(result + n * P * M, P, M, M, out + n * M * P, P);
                    });
            return true;
        }
    }

    std::int32_t* acc = buffers.acc.get(N * P * M);

    auto convolve = [&](std::uint8_t* input, std::int32_t* result) {
        s.call.execute(
            *s.primitive, s.stream,
            {{DNNL_ARG_SRC, input}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, result}});
        s.stream.wait();
    };
    if (s.exact || s.sevenBitWeights) {
        convolve(source, acc);
    } else {
        // 7-bit source for the primitive, the high bit added back: sparsely when few values have
        // it, else as a second convolution of the 0/1 high-bit plane.
        std::uint8_t* lowBits = buffers.lowBits.get(sourceSize);
        const std::int64_t high = splitLowBits(source, lowBits, sourceSize);
        convolve(lowBits, acc);
        if (high * 8 > sourceSize) {
            highBitPlane(source, lowBits, sourceSize);
            std::int32_t* highAcc = buffers.highAcc.get(N * P * M);
            convolve(lowBits, highAcc);
            const std::int32_t* __restrict__ h = highAcc;
            std::int32_t* __restrict__ a = acc;
            for (std::int64_t i = 0; i < N * P * M; ++i) a[i] += h[i] * 128;
        } else if (high > 0) {
            addHighBits(pool, pr, source, s.transposed.data(), acc);
        }
    }

    // The epilogue on the channels-last accumulators (contiguous per pixel), then oneDNN's reorder
    // to NC... into y.
    switch (epilogue.output) {
        case Int8ConvEpilogue::Output::Int32:
            for (std::int64_t p = 0; p < N * P; ++p) {
                std::int32_t* __restrict__ a = acc + p * M;
                for (std::int64_t m = 0; m < M; ++m) a[m] = wrappingSum(a[m], off[m]);
            }
            oneThread([&] { s.writeResult(dt::s32, acc, y.raw()); });
            break;
        case Int8ConvEpilogue::Output::Float: {
            const std::vector<float> scales = channelScales(epilogue, M);
            const float* sc = scales.data();
            const float* bi = epilogue.bias;  // read only when hasBias
            const bool relu = epilogue.activation.kind == FusedActivation::Kind::Relu;
            const bool hasBias = epilogue.bias != nullptr;
            // A tile of pixels at a time over the threads: its values computed channels-last in
            // the thread's scratch, then written into y's NC... rows (no channels-last copy of
            // the whole result, no serial reorder).
            const std::int64_t tiles = (P + kRequantizeTile - 1) / kRequantizeTile;
            float* out = y.data<float>();
            pool.parallelFor(
                N * tiles, static_cast<double>(kRequantizeTile * M) * 4.0,
                [&](std::int64_t b, std::int64_t e) {
                    float* tile = scratch().values.get(kRequantizeTile * M);
                    for (std::int64_t item = b; item < e; ++item) {
                        const std::int64_t n = item / tiles, p0 = (item % tiles) * kRequantizeTile;
                        const std::int64_t rows = std::min(kRequantizeTile, P - p0);
                        for (std::int64_t r = 0; r < rows; ++r) {
                            const std::int32_t* __restrict__ a = acc + (n * P + p0 + r) * M;
                            float* __restrict__ v = tile + r * M;
                            // Cast, scale, bias: the unfused graph's order.
                            if (hasBias)
                                for (std::int64_t m = 0; m < M; ++m)
                                    v[m] = static_cast<float>(wrappingSum(a[m], off[m])) * sc[m] +
                                           bi[m];
                            else
                                for (std::int64_t m = 0; m < M; ++m)
                                    v[m] = static_cast<float>(wrappingSum(a[m], off[m])) * sc[m];
                        }
                        if (relu)
                            for (std::int64_t i = 0; i < rows * M; ++i)
                                tile[i] = tile[i] > 0.0f ? tile[i] : 0.0f;
                        else
                            epilogue.activation.applyInPlace(tile, rows * M);
                        for (std::int64_t m = 0; m < M; ++m) {
                            float* __restrict__ o = out + (n * M + m) * P + p0;
                            const float* __restrict__ t = tile + m;
                            for (std::int64_t r = 0; r < rows; ++r) o[r] = t[r * M];
                        }
                    }
                });
            break;
        }
        case Int8ConvEpilogue::Output::Quantized: {
            // Requantized a tile of pixels at a time over the threads (channels-last, contiguous
            // per pixel), each tile transposed into y's NC... rows: no channels-last copy of the
            // whole result.
            const std::vector<float> scales = channelScales(epilogue, M);
            const Requantizer requantize(off, scales.data(), y, epilogue.outputZeroPoint, M, P,
                                         channelsLast);
            const std::int64_t tiles = (P + kRequantizeTile - 1) / kRequantizeTile;
            pool.parallelFor(N * tiles, static_cast<double>(kRequantizeTile * M) * 4.0,
                             [&](std::int64_t b, std::int64_t e) {
                                 Scratch& mine = scratch();
                                 for (std::int64_t item = b; item < e; ++item) {
                                     const std::int64_t n = item / tiles;
                                     const std::int64_t p0 = (item % tiles) * kRequantizeTile;
                                     requantize(acc + (n * P + p0) * M, n, p0,
                                                std::min(kRequantizeTile, P - p0),
                                                mine.quantized.get(kRequantizeTile * M));
                                 }
                             });
            break;
        }
    }
    return true;
}

void DnnlInt8Conv::runDepthwise(ThreadPool& pool, const ConvProblem& pr, const Tensor& x,
                                std::int32_t xZeroPoint, const Tensor& w,
                                const Int8ConvEpilogue& epilogue, Tensor& y) {
    State& s = *state_;
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, taps = g.kernelSize();
    if (!s.depthwise || !w.sharesStorageWith(s.heldDepthwise)) {
        s.depthwise = std::make_unique<DepthwiseWeights>(w.data<std::int8_t>(), C, taps);
        s.heldDepthwise = w;
        countWeightReorder(static_cast<std::uint64_t>((taps + 1) / 2 * C * 4));
    }
    // The values are centred (x - zero point), so only the bias is added to the accumulators.
    std::vector<std::int32_t> offset(static_cast<std::size_t>(C), 0);
    if (epilogue.intBias) offset.assign(epilogue.intBias, epilogue.intBias + C);
    const std::vector<float> scales = channelScales(epilogue, C);
    const std::int64_t P = g.outputSize(), OH = g.output[1], OW = g.output[2];
    const Requantizer requantize(offset.data(), scales.data(), y, epilogue.outputZeroPoint, C, P,
                                 true);
    // Per output row: the accumulators, then the epilogue on them while they are in the cache.
    // A tap in the padding reads C bytes of the zero point.
    auto rows = [&]<class Q>(const Q* in, const Q* zeros) {
        pool.parallelFor(
            pr.batch * OH, 2.0 * static_cast<double>(OW * C * taps),
            [&](std::int64_t b, std::int64_t e) {
                Scratch& mine = scratch();
                std::int32_t* acc = mine.acc.get(OW * C);
                std::vector<const Q*> at(static_cast<std::size_t>(OW * (taps + 1)));
                for (std::int64_t row = b; row < e; ++row) {
                    const std::int64_t n = row / OH, oy = row % OH;
                    depthwiseRow(in, pr, *s.depthwise, xZeroPoint, zeros, n, oy, at.data(), acc);
                    requantize(acc, n, oy * OW, OW, nullptr);  // channels-last: no tile
                }
            });
    };
    if (x.dtype() == DataType::Int8) {
        const std::vector<std::int8_t> zeros(static_cast<std::size_t>(C),
                                             static_cast<std::int8_t>(xZeroPoint));
        rows(x.data<std::int8_t>(), zeros.data());
    } else {
        const std::vector<std::uint8_t> zeros(static_cast<std::size_t>(C),
                                              static_cast<std::uint8_t>(xZeroPoint));
        rows(x.data<std::uint8_t>(), zeros.data());
    }
}

#else

struct DnnlInt8Conv::State {};
DnnlInt8Conv::DnnlInt8Conv() = default;
DnnlInt8Conv::~DnnlInt8Conv() = default;
bool DnnlInt8Conv::run(ThreadPool&, const ConvProblem&, const Tensor&, std::int32_t, const Tensor&,
                       const Int8ConvEpilogue&, Tensor&, bool) {
    return false;
}

#endif

}  // namespace onnxlens::engine::ops
