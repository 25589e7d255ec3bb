#pragma once
// AVX2 helpers of the 8-bit kernels (QuantizeLinear, the QOperator family): eight 8-bit values
// widened to floats, and sixteen floats rounded half to even and saturated to 8 bits, as the
// scalar requantization (qlinear::requantize, MsQLinearCommon.h) does each. Compiled per ISA with
// the families that include it; empty without AVX2 (the callers keep their scalar loops).
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

}  // namespace onnxlens::engine::ops
