#pragma once
// Transposes of byte matrices (the layout changes around the 8-bit kernels), 16 x 16 blocks at a
// time in vector registers: four rounds of interleaves (bytes, pairs, quads, halves) with SSE2,
// which every x86-64 processor has; elsewhere the same block as 8 x 8 sub-blocks in 64-bit
// words. Measured on a Zen 3 core: 2.5-2.9 GB/s with 64-bit words, ~10 GB/s with SSE2 (oneDNN's
// u8 reorder to channels-last: under 1 GB/s).
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace onnxlens::engine::ops {

namespace byte_transpose_detail {

#if defined(__SSE2__)

// out[c * outStride + r] = in[r * inStride + c] ^ flip for the 16 x 16 block.
inline void block16(const std::uint8_t* in, std::int64_t inStride, std::uint8_t* out,
                    std::int64_t outStride, std::uint8_t flip) {
    __m128i x[16], y[16];
    for (int i = 0; i < 16; ++i)
        x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * inStride));
    // y[2i], y[2i + 1]: rows 2i and 2i + 1 interleaved, columns 0-7 and 8-15.
    for (int i = 0; i < 8; ++i) {
        y[2 * i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
        y[2 * i + 1] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
    }
    // x[4j + q]: columns 4q..4q+3, four bytes each (rows 4j..4j+3).
    for (int j = 0; j < 4; ++j)
        for (int h = 0; h < 2; ++h) {
            x[4 * j + 2 * h] = _mm_unpacklo_epi16(y[4 * j + h], y[4 * j + 2 + h]);
            x[4 * j + 2 * h + 1] = _mm_unpackhi_epi16(y[4 * j + h], y[4 * j + 2 + h]);
        }
    // y[8k + m]: columns 2m and 2m + 1, eight bytes each (rows 8k..8k+7).
    for (int k = 0; k < 2; ++k)
        for (int q = 0; q < 4; ++q) {
            y[8 * k + 2 * q] = _mm_unpacklo_epi32(x[8 * k + q], x[8 * k + 4 + q]);
            y[8 * k + 2 * q + 1] = _mm_unpackhi_epi32(x[8 * k + q], x[8 * k + 4 + q]);
        }
    const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
    for (int m = 0; m < 8; ++m) {
        const __m128i even = _mm_xor_si128(_mm_unpacklo_epi64(y[m], y[8 + m]), f);
        const __m128i odd = _mm_xor_si128(_mm_unpackhi_epi64(y[m], y[8 + m]), f);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * m) * outStride), even);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * m + 1) * outStride), odd);
    }
}

#else

// The 8 x 8 block as eight 64-bit words: three rounds of block swaps (4 x 4, 2 x 2, 1 x 1).
inline void block8(const std::uint8_t* in, std::int64_t inStride, std::uint8_t* out,
                   std::int64_t outStride, std::uint64_t flip) {
    std::uint64_t a[8];
    for (int i = 0; i < 8; ++i) std::memcpy(&a[i], in + i * inStride, 8);
    // Byte j of a[i] is element (i, j) (little-endian). Each round swaps, in every pair of rows
    // (i, i + s), the bytes j + s of row i with the bytes j of row i + s, j & s == 0.
    constexpr std::uint64_t kMasks[3] = {0x00000000FFFFFFFFull, 0x0000FFFF0000FFFFull,
                                         0x00FF00FF00FF00FFull};
    int round = 0;
    for (int s = 4; s >= 1; s /= 2, ++round) {
        const int shift = 8 * s;
        for (int i = 0; i < 8; ++i) {
            if (i & s) continue;
            const std::uint64_t t = ((a[i] >> shift) ^ a[i + s]) & kMasks[round];
            a[i + s] ^= t;
            a[i] ^= t << shift;
        }
    }
    for (int i = 0; i < 8; ++i) {
        const std::uint64_t v = a[i] ^ flip;
        std::memcpy(out + i * outStride, &v, 8);
    }
}

inline void block16(const std::uint8_t* in, std::int64_t inStride, std::uint8_t* out,
                    std::int64_t outStride, std::uint8_t flip) {
    const std::uint64_t flipWord = 0x0101010101010101ull * flip;
    for (int r = 0; r < 16; r += 8)
        for (int c = 0; c < 16; c += 8)
            block8(in + r * inStride + c, inStride, out + c * outStride + r, outStride, flipWord);
}

#endif

// transposeBytes of R rows whose output rows are packed (outStride == R): one pass that the
// compiler vectorises as an interleave.
template <int R>
void fewRows(const std::uint8_t* in, std::int64_t cols, std::int64_t inStride, std::uint8_t* out,
             std::uint8_t flip) {
    std::uint8_t* __restrict__ o = out;
    const std::uint8_t* __restrict__ rowsIn[R];
    for (int r = 0; r < R; ++r) rowsIn[r] = in + r * inStride;
    for (std::int64_t c = 0; c < cols; ++c)
        for (int r = 0; r < R; ++r) o[c * R + r] = static_cast<std::uint8_t>(rowsIn[r][c] ^ flip);
}

}  // namespace byte_transpose_detail

// out[c * outStride + r] = in[r * inStride + c] ^ flip for r < rows, c < cols.
inline void transposeBytes(const std::uint8_t* in, std::int64_t rows, std::int64_t cols,
                           std::int64_t inStride, std::uint8_t* out, std::int64_t outStride,
                           std::uint8_t flip = 0) {
    constexpr std::int64_t kBlock = 16;
    if (rows < kBlock / 2) {
        // A few rows (an image's 3 channels): packed output rows with the row count a constant
        // (the compiler interleaves them with shuffles), else element by element.
        if (outStride == rows && rows >= 1 && rows <= 4) {
            switch (rows) {
                case 1:
                    byte_transpose_detail::fewRows<1>(in, cols, inStride, out, flip);
                    return;
                case 2:
                    byte_transpose_detail::fewRows<2>(in, cols, inStride, out, flip);
                    return;
                case 3:
                    byte_transpose_detail::fewRows<3>(in, cols, inStride, out, flip);
                    return;
                default:
                    byte_transpose_detail::fewRows<4>(in, cols, inStride, out, flip);
                    return;  // 4
            }
        }
        for (std::int64_t c = 0; c < cols; ++c)
            for (std::int64_t r = 0; r < rows; ++r)
                out[c * outStride + r] = static_cast<std::uint8_t>(in[r * inStride + c] ^ flip);
        return;
    }
    const std::int64_t fullRows = rows / kBlock * kBlock, fullCols = cols / kBlock * kBlock;
    // 64 x 64 tiles of blocks: the tile's rows of input and of output stay in the cache.
    constexpr std::int64_t kTile = 64;
    for (std::int64_t r0 = 0; r0 < fullRows; r0 += kTile) {
        const std::int64_t r1 = r0 + kTile < fullRows ? r0 + kTile : fullRows;
        for (std::int64_t c0 = 0; c0 < fullCols; c0 += kTile) {
            const std::int64_t c1 = c0 + kTile < fullCols ? c0 + kTile : fullCols;
            for (std::int64_t r = r0; r < r1; r += kBlock)
                for (std::int64_t c = c0; c < c1; c += kBlock)
                    byte_transpose_detail::block16(in + r * inStride + c, inStride,
                                                   out + c * outStride + r, outStride, flip);
        }
    }
    // The edges (the last rows % 16 rows, the last cols % 16 columns) a partial block at a time,
    // through a staging block.
    auto partial = [&](std::int64_t r, std::int64_t c) {
        const std::int64_t rr = rows - r < kBlock ? rows - r : kBlock;
        const std::int64_t cc = cols - c < kBlock ? cols - c : kBlock;
        std::uint8_t block[kBlock * kBlock] = {}, transposed[kBlock * kBlock];
        for (std::int64_t i = 0; i < rr; ++i)
            std::memcpy(block + i * kBlock, in + (r + i) * inStride + c,
                        static_cast<std::size_t>(cc));
        byte_transpose_detail::block16(block, kBlock, transposed, kBlock, flip);
        for (std::int64_t j = 0; j < cc; ++j)
            std::memcpy(out + (c + j) * outStride + r, transposed + j * kBlock,
                        static_cast<std::size_t>(rr));
    };
    for (std::int64_t r = 0; r < fullRows; r += kBlock)
        for (std::int64_t c = fullCols; c < cols; c += kBlock) partial(r, c);
    for (std::int64_t r = fullRows; r < rows; r += kBlock)
        for (std::int64_t c = 0; c < cols; c += kBlock) partial(r, c);
}

}  // namespace onnxlens::engine::ops
