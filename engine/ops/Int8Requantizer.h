#pragma once
// The requantizing epilogue of the 8-bit convolutions (DnnlInt8Conv.cpp): exact int32
// accumulators of channels-last pixels to 8-bit outputs, as ONNX's QLinearConv and ONNX Runtime's
// MLAS compute them (round half to even of the float product, then the zero point, saturated).
// Compiled per ISA with the file that includes it (AVX2 packs 32 or 8 channels at a time).
#include <algorithm>
#include <cmath>
#include <cstdint>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "ByteTranspose.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

// a + b modulo 2^32: the accumulators are int32, as ONNX's integer outputs are; hostile biases
// and zero points may wrap them (as ORT's do) but never make signed overflow.
inline std::int32_t wrappingSum(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// Pixels requantized per transposed tile (NC... outputs).
constexpr std::int64_t kRequantizeTile = 64;

// The int32 accumulators of an 8-bit convolution's run of pixels (channels-last, M per pixel)
// requantized into y: y = saturate(nearbyint(float(acc + offset[m]) * scale[m]) + zero point),
// written channels-last, or into y's NC... rows through tiles of kRequantizeTile pixels
// transposed in a scratch tile.
class Requantizer {
  public:
    Requantizer(const std::int32_t* offset, const float* scale, Tensor& y, std::int32_t zeroPoint,
                std::int64_t channels, std::int64_t pixels, bool channelsLast)
        : offset_(offset),
          scale_(scale),
          out_(static_cast<std::uint8_t*>(y.raw())),
          low_(y.dtype() == DataType::Int8 ? -128.0f : 0.0f),
          high_(y.dtype() == DataType::Int8 ? 127.0f : 255.0f),
          zero_(static_cast<float>(zeroPoint)),
          channels_(channels),
          pixels_(pixels),
          channelsLast_(channelsLast) {}

    // The `count` pixels of image n from pixel p0, their accumulators at `acc`; `tile`: room for
    // kRequantizeTile * channels bytes (NC... outputs only).
    void operator()(const std::int32_t* acc, std::int64_t n, std::int64_t p0, std::int64_t count,
                    std::uint8_t* tile) const {
        const std::int64_t M = channels_, P = pixels_;
        if (channelsLast_) {
            rows(acc, count, out_ + (n * P + p0) * M);
            return;
        }
        for (std::int64_t t = 0; t < count; t += kRequantizeTile) {
            const std::int64_t r = std::min(kRequantizeTile, count - t);
            rows(acc + t * M, r, tile);
            transposeBytes(tile, r, M, M, out_ + n * M * P + p0 + t, P);
        }
    }

  private:
    // `count` pixels' channels into `out`, M bytes per pixel. The bounds are integers, so
    // clamping before rounding gives the same value as after; rounding is to nearest even (the
    // default mode, as nearbyint), and a NaN saturates to the low end.
    void rows(const std::int32_t* acc, std::int64_t count, std::uint8_t* out) const {
        // Locals, not the members: the byte stores below may alias anything, which would keep
        // the compiler from vectorising the loop.
        const std::int32_t* const offs = offset_;
        const float* const scs = scale_;
        const float low = low_ - zero_, high = high_ - zero_;
        const auto zero = static_cast<std::int32_t>(zero_);
        const std::int64_t M = channels_;
        auto scalar = [&](const std::int32_t* a, std::int64_t m, std::int64_t end,
                          std::uint8_t* o) {
            for (; m < end; ++m) {
                float v = static_cast<float>(wrappingSum(a[m], offs[m])) * scs[m];
                v = v > low ? v : low;
                v = v < high ? v : high;
                o[m] = static_cast<std::uint8_t>(
                    (static_cast<std::int32_t>(std::nearbyint(v)) + zero) & 0xff);
            }
        };
#ifdef __AVX2__
        // Channels a multiple of 8: one run over all pixels, the channel index wrapping (no
        // per-pixel start-up for 16- and 24-channel layers). Else pixel by pixel.
        const bool isSigned = low_ < 0.0f;
        if (M % 8 == 0) {
            if (isSigned)
                vectorRun<true>(acc, count * M, offs, scs, M, low, high, zero, out);
            else
                vectorRun<false>(acc, count * M, offs, scs, M, low, high, zero, out);
            return;
        }
#endif
        for (std::int64_t r = 0; r < count; ++r) {
            const std::int32_t* __restrict__ a = acc + r * M;
            std::uint8_t* __restrict__ o = out + r * M;
            std::int64_t m = 0;
#ifdef __AVX2__
            m = isSigned ? vectorRun<true>(a, M, offs, scs, M, low, high, zero, o)
                         : vectorRun<false>(a, M, offs, scs, M, low, high, zero, o);
#endif
            scalar(a, m, M, o);
        }
    }

#ifdef __AVX2__
    // `length` values from a, their channel the index modulo M (M a multiple of 8, or length at
    // most M), 32 then 8 at a time; returns how many it did (a multiple of 8).
    template <bool SignedOutput>
    static std::int64_t vectorRun(const std::int32_t* a, std::int64_t length,
                                  const std::int32_t* offs, const float* scs, std::int64_t M,
                                  float low, float high, std::int32_t zero, std::uint8_t* o) {
        const __m256 lo = _mm256_set1_ps(low), hi = _mm256_set1_ps(high);
        const __m256i z = _mm256_set1_epi32(zero);
        // packs work within 128-bit lanes: this puts the four quarters back in order.
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        std::int64_t channel = 0;
        auto eight = [&](std::int64_t i) {
            const __m256i sum = _mm256_add_epi32(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)),
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(offs + channel)));
            __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(sum), _mm256_loadu_ps(scs + channel));
            v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);  // max(NaN, lo) is lo
            channel += 8;
            if (channel == M) channel = 0;
            return _mm256_add_epi32(_mm256_cvtps_epi32(v), z);
        };
        std::int64_t i = 0;
        for (; i + 32 <= length; i += 32) {
            const __m256i q0 = eight(i), q1 = eight(i + 8), q2 = eight(i + 16), q3 = eight(i + 24);
            __m256i bytes;
            if constexpr (SignedOutput)
                bytes = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
            else
                bytes =
                    _mm256_packus_epi16(_mm256_packus_epi32(q0, q1), _mm256_packus_epi32(q2, q3));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                                _mm256_permutevar8x32_epi32(bytes, order));
        }
        for (; i + 8 <= length; i += 8) {
            const __m256i q = eight(i);
            const __m128i half0 = _mm256_castsi256_si128(q), half1 = _mm256_extracti128_si256(q, 1);
            const __m128i words =
                SignedOutput ? _mm_packs_epi32(half0, half1) : _mm_packus_epi32(half0, half1);
            const __m128i bytes =
                SignedOutput ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(o + i), bytes);
        }
        return i;
    }
#endif

    const std::int32_t* offset_;
    const float* scale_;
    std::uint8_t* out_;
    float low_, high_, zero_;
    std::int64_t channels_, pixels_;
    bool channelsLast_;
};

}  // namespace onnxlens::engine::ops
