#pragma once
// AVX2 helpers of the 8-bit kernels (QuantizeLinear, the QOperator family): eight 8-bit values
// widened to floats, and sixteen floats rounded half to even and saturated to 8 bits, as the
// scalar requantization (qlinear::requantize, MsQLinearCommon.h) does each; and the one float ->
// uint8 quantization loop of DynamicQuantizeLinear and the quantized products' activations
// (QuantizedProduct.h). Compiled per ISA with the families that include it; without AVX2 the
// vector parts are empty and the loops scalar.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace onnxlens::engine::ops {

#ifdef __AVX2__
// Eight 8-bit values from p, as floats.
template <class Q>
__m256 eightAsFloats(const Q* p) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi32_ps(std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(bytes)
                                                  : _mm256_cvtepu8_epi32(bytes));
}

// requantize<Q> of sixteen floats, stored at out: cvtps2dq rounds half to even and gives
// 0x80000000 for NaN and values outside int32 (the lowest after saturation, as requantize
// gives), and the saturating packs clamp to Q's range.
template <class Q>
void storeSixteenRequantized(__m256 first, __m256 second, Q* out) {
    const __m256i words = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(_mm256_cvtps_epi32(first), _mm256_cvtps_epi32(second)), 0xD8);
    const __m128i low = _mm256_castsi256_si128(words), high = _mm256_extracti128_si256(words, 1);
    const __m128i bytes =
        std::is_signed_v<Q> ? _mm_packs_epi16(low, high) : _mm_packus_epi16(low, high);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
}
#endif

// quantize<Q> of in[begin, end) into out, sixteen at a time where the processor has AVX2;
// returns the index it stopped at (the caller does the rest). The same steps: the quotient,
// rounded half to even, plus the zero point, a NaN as 0, saturated.
template <class Q>
std::int64_t quantizeFloatsVector(const float* in, std::int64_t begin, std::int64_t end,
                                  float scale, float zeroPoint, Q* out) {
    std::int64_t i = begin;
#ifdef __AVX2__
    const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zeroPoint);
    const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest()));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()));
    auto eight = [&](std::int64_t k) {
        __m256 q = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(in + k), s),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                 z);
        q = _mm256_andnot_ps(_mm256_cmp_ps(q, q, _CMP_UNORD_Q), q);  // NaN -> 0
        return _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    };
    for (; i + 16 <= end; i += 16) storeSixteenRequantized(eight(i), eight(i + 8), out + i);
#else
    (void)in, (void)end, (void)scale, (void)zeroPoint, (void)out;
#endif
    return i;
}

// out[i] = uint8 of round_half_even(in[i] / scale) + zeroPoint, saturated (a NaN ends as 0), for
// i in [begin, end): sixteen at a time with AVX2, the rest one by one with the same steps.
inline void quantizeToUInt8(const float* in, std::int64_t begin, std::int64_t end, float scale,
                            float zeroPoint, std::uint8_t* out) {
    for (std::int64_t i = quantizeFloatsVector<std::uint8_t>(in, begin, end, scale, zeroPoint, out);
         i < end; ++i) {
        float q = std::nearbyint(in[i] / scale) + zeroPoint;
        q = q > 255.0f ? 255.0f : q;
        q = q >= 0.0f ? q : 0.0f;
        out[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(q));
    }
}

}  // namespace onnxlens::engine::ops
