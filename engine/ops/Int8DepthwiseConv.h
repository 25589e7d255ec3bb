#pragma once
// The engine's own 8-bit depthwise convolution (one filter per channel: group = C = M) on a
// channels-last source [N][IH][IW][C], for the channels-last QLinearConv (DnnlInt8Conv.cpp):
// oneDNN's int8 depthwise kernel was 20-30% slower than ONNX Runtime's on AVX2 (a QOperator
// MobileNetV2's 17 depthwise layers, docs/performance.md).
//
// Exact on every processor: each value is centred in int16 (x - x_zero_point, -255 to 255) and
// multiplied by its int8 weight with int16 x int16 -> int32 multiply-adds of two taps
// (vpmaddwd: |product| <= 255 * 128, no saturation), summed in int32. A tap in the padding
// reads a row of zero points (centred: 0), so borders take the same loop. The result is the int32
// accumulator row of each output row, handed to the caller's epilogue.
//
// AVX2 only (the per-ISA objects of a portable build have it; the baseline leaves these layers to
// oneDNN); C a multiple of 16, at least kMinDepthwiseChannels, at most kMaxDepthwiseTaps taps.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "ConvGeometry.h"

namespace onnxlens::engine::ops {

inline constexpr std::int64_t kMaxDepthwiseTaps = 25;

// The weights of a depthwise layer as the kernel reads them: per pair of taps and block of 16
// channels, 32 int16 in vpunpck{l,h}wd's order (the taps' weights interleaved), a missing second
// tap of an odd count as weight 0.
class DepthwiseWeights {
  public:
    // w: int8 [C][taps] (ONNX's [C, 1, KH, KW]).
    DepthwiseWeights(const std::int8_t* w, std::int64_t channels, std::int64_t taps)
        : channels_(channels), taps_(taps), pairs_((taps + 1) / 2) {
        values_.assign(static_cast<std::size_t>(pairs_ * channels_ * 2), 0);
        for (std::int64_t p = 0; p < pairs_; ++p)
            for (std::int64_t block = 0; block < channels_ / 16; ++block) {
                std::int16_t* out = values_.data() + (p * channels_ + block * 16) * 2;
                // unpacklo (first 16 values): channels 0-3 then 8-11 of the block; unpackhi
                // (next 16): 4-7 then 12-15; each channel's two taps side by side.
                for (int half = 0; half < 2; ++half)
                    for (int lane = 0; lane < 2; ++lane)
                        for (int i = 0; i < 4; ++i) {
                            const std::int64_t c = block * 16 + lane * 8 + half * 4 + i;
                            const std::int64_t at = half * 16 + lane * 8 + i * 2;
                            out[at] = weight(w, c, 2 * p);
                            out[at + 1] = weight(w, c, 2 * p + 1);
                        }
            }
    }

    std::int64_t channels() const { return channels_; }
    std::int64_t taps() const { return taps_; }
    const std::int16_t* pair(std::int64_t p, std::int64_t block) const {
        return values_.data() + (p * channels_ + block * 16) * 2;
    }

  private:
    std::int16_t weight(const std::int8_t* w, std::int64_t c, std::int64_t tap) const {
        return tap < taps_ ? static_cast<std::int16_t>(w[c * taps_ + tap]) : std::int16_t{0};
    }

    std::int64_t channels_, taps_, pairs_;
    std::vector<std::int16_t> values_;
};

// Layers of fewer channels stay on oneDNN: each output pixel first sets up its taps' pointers,
// which pays off over 12 or more blocks of 16 channels. Measured on a 2-core Zen 3 (per-node
// profiles, docs/performance.md): 14x14 and 7x7 layers of 384-960 channels 25-45% faster than
// oneDNN's, 28x28x192 5-7%; 32-144 channels at 56x56-112x112 13-107% slower.
inline constexpr std::int64_t kMinDepthwiseChannels = 192;

// Whether the kernel takes the problem (2-D, depthwise, C a multiple of 16 and at least
// kMinDepthwiseChannels, few taps) on this build.
inline bool depthwiseKernelTakes(const ConvProblem& pr) {
#ifdef __AVX2__
    const WindowGeometry& g = pr.geometry;
    return g.spatialRank == 2 && pr.groups == pr.inChannels && pr.outChannels == pr.inChannels &&
           pr.inChannels % 16 == 0 && pr.inChannels >= kMinDepthwiseChannels &&
           g.kernelSize() <= kMaxDepthwiseTaps;
#else
    (void)pr;
    return false;
#endif
}

#ifdef __AVX2__
namespace depthwise_detail {

// One block of 16 channels of the row's pixels: Pairs pairs of taps (0: `pairs` at run time),
// the weights read from `w` (32 int16 per pair), `Centre`: subtract the zero point.
template <class Q, int Pairs, bool Centre>
void block(const Q* const* at, std::int64_t taps, std::int64_t pairs, std::int64_t OW,
           std::int64_t offset, const std::int16_t* w, std::int64_t wStride, __m256i z,
           std::int32_t* out, std::int64_t C) {
    const std::int64_t count = Pairs > 0 ? Pairs : pairs;
    for (std::int64_t ox = 0; ox < OW; ++ox) {
        const Q* const* tap = at + ox * (taps + 1);
        __m256i low = _mm256_setzero_si256(), high = _mm256_setzero_si256();
        for (std::int64_t p = 0; p < count; ++p) {
            auto load = [&](const Q* pixel) {
                const __m128i bytes =
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(pixel + offset));
                const __m256i wide =
                    std::is_signed_v<Q> ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
                return Centre ? _mm256_sub_epi16(wide, z) : wide;
            };
            const __m256i first = load(tap[2 * p]), second = load(tap[2 * p + 1]);
            const std::int16_t* pw = w + p * wStride;
            low = _mm256_add_epi32(
                low, _mm256_madd_epi16(_mm256_unpacklo_epi16(first, second),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pw))));
            high = _mm256_add_epi32(
                high,
                _mm256_madd_epi16(_mm256_unpackhi_epi16(first, second),
                                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pw + 16))));
        }
        // low: channels 0-3 | 8-11, high: 4-7 | 12-15.
        std::int32_t* o = out + ox * C + offset;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o),
                            _mm256_permute2x128_si256(low, high, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 8),
                            _mm256_permute2x128_si256(low, high, 0x31));
    }
}

}  // namespace depthwise_detail
#endif

// The int32 accumulators of output row oy of image n into acc [OW][C]: sum over the window of
// (x - zeroPoint) * w. `zeroRow`: C bytes of the zero point (what a padded tap reads); `at`:
// scratch for OW * (taps + 1) pointers. Q is the source's 8-bit type.
template <class Q>
void depthwiseRow(const Q* x, const ConvProblem& pr, const DepthwiseWeights& weights,
                  std::int32_t zeroPoint, const Q* zeroRow, std::int64_t n, std::int64_t oy,
                  const Q** at, std::int32_t* acc) {
#ifdef __AVX2__
    const WindowGeometry& g = pr.geometry;
    const std::int64_t C = pr.inChannels, IH = g.input[1], IW = g.input[2], OW = g.output[2];
    const std::int64_t KH = g.kernel[1], KW = g.kernel[2], taps = KH * KW;
    const std::int64_t pairs = (taps + 1) / 2;
    const Q* image = x + n * IH * IW * C;
    // Each pixel's taps: the pixel read, or the zero-point row where the tap is in the padding;
    // an odd count's last tap pairs with the zero-point row (its weight is 0).
    for (std::int64_t ox = 0; ox < OW; ++ox) {
        const Q** tap = at + ox * (taps + 1);
        std::int64_t t = 0;
        for (std::int64_t ky = 0; ky < KH; ++ky) {
            const std::int64_t iy = oy * g.stride[1] - g.padBegin[1] + ky * g.dilation[1];
            for (std::int64_t kx = 0; kx < KW; ++kx, ++t) {
                const std::int64_t ix = ox * g.stride[2] - g.padBegin[2] + kx * g.dilation[2];
                tap[t] =
                    iy >= 0 && iy < IH && ix >= 0 && ix < IW ? image + (iy * IW + ix) * C : zeroRow;
            }
        }
        tap[taps] = zeroRow;
    }
    const __m256i z = _mm256_set1_epi16(static_cast<std::int16_t>(zeroPoint));
    const std::int64_t wStride = C * 2;
    for (std::int64_t b = 0; b < C / 16; ++b) {
        const std::int16_t* w = weights.pair(0, b);
        if (taps == 9 && zeroPoint == 0)
            depthwise_detail::block<Q, 5, false>(at, taps, pairs, OW, b * 16, w, wStride, z, acc,
                                                 C);
        else if (taps == 9)
            depthwise_detail::block<Q, 5, true>(at, taps, pairs, OW, b * 16, w, wStride, z, acc, C);
        else
            depthwise_detail::block<Q, 0, true>(at, taps, pairs, OW, b * 16, w, wStride, z, acc, C);
    }
#else
    (void)x, (void)pr, (void)weights, (void)zeroPoint, (void)zeroRow, (void)n, (void)oy, (void)at,
        (void)acc;
#endif
}

}  // namespace onnxlens::engine::ops
