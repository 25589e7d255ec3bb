#pragma once
// MatMulNBits at accuracy_level 4 with 4-bit weights: integer block products (issue 29).
//
// A's rows are quantized per block of block_size along K to int8 (q = round(a * 127 / max|a|),
// half to even, scale s_a = max|a| / 127, 0 for an all-zero block); the weights stay packed.
// For each row r, column n and block b the kernel takes the exact int32 product
// dot = sum(q_a * q_w) of the int8 values and the unsigned nibbles q_w in [0, 15], and
//   y[r][n] = sum_b s_a * s_w * dot  -  sum_b (s_a * sum(q_a)) * (s_w * zero_point),
// which is sum_b s_a * s_w * sum(q_a * (q_w - zero_point)): the zero point comes off per block
// as a float correction, so it may be packed, the default 8, or of A's type.
//
// Layout of A for the nibble unpacking: the packed bytes of one column are contiguous along K
// (byte j holds K positions 2j (low nibble) and 2j + 1 (high)), so A is cut in chunks of 64
// positions, each stored as its 32 even positions then its 32 odd ones; 32 bytes of weights
// then line up with two 32-byte loads of A. Positions past K are 0.
//
// AVX2 (no VNNI): _mm256_maddubs_epi16 of the nibbles (unsigned, <= 15) with A (signed, |q_a| <=
// 127): each pair sums to at most 2 * 15 * 127 = 3810, the low and high halves' sum to 7620, so
// no int16 saturates; _mm256_madd_epi16 with ones widens to int32. Lane l of a chunk then holds
// the product of bytes 4l..4l+3 (both nibbles), that is, of block (32 chunk + 4l) / blob.
// Without AVX2 a scalar loop computes the same integers.
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace onnxlens::engine::ops::nbits4 {

// Block sizes up to this keep every int32 lane below 2^31 (block_size / 8 products of <= 1905).
constexpr std::int64_t kMaxIntBlockSize = std::int64_t{1} << 20;

// The weights of a 4-bit MatMulNBits, as the kernel reads them.
struct Int4Weights {
    std::int64_t k = 0, n = 0, blockSize = 0, kBlocks = 0, blob = 0, zeroPointBlob = 0;
    const std::uint8_t* packed = nullptr;      // [N, k_blocks, blob]
    const float* scales = nullptr;             // [N, k_blocks]
    const std::uint8_t* packedZero = nullptr;  // [N, zeroPointBlob] or null
    const float* floatZero = nullptr;          // [N, k_blocks] or null
    std::int64_t bytesPerColumn() const { return kBlocks * blob; }
    std::int64_t chunks() const { return (bytesPerColumn() + 31) / 32; }
    float zeroPoint(std::int64_t column, std::int64_t block) const {
        if (floatZero) return floatZero[column * kBlocks + block];
        if (!packedZero) return 8.0f;
        const std::uint8_t byte = packedZero[column * zeroPointBlob + block / 2];
        return static_cast<float>((byte >> (block % 2 * 4)) & 15);
    }
};

// The blocks of eight (blocks of 32 values, four chunks) in the order the AVX2 kernel's three
// horizontal adds leave them.
constexpr int kHaddOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// A's rows quantized for the kernel.
struct QuantizedRows {
    std::int64_t rows = 0, chunks = 0, kBlocks = 0, paddedBlocks = 0;
    bool inKOrder = false;       // q in K order (the column tiles' layout), not in chunks
    std::vector<std::int8_t> q;  // [rows, chunks * 64], the chunk layout above or K order
    // laneScale and haddScale are empty in K order (the column tiles do not read them).
    std::vector<float> laneScale;   // [rows, chunks * 8]: s_a of each int32 lane's block
    std::vector<float> blockScale;  // [rows, k_blocks]: s_a
    std::vector<float> correction;  // [rows, paddedBlocks]: s_a * sum(q_a), 0 past k_blocks
    std::vector<float> haddScale;   // [rows, paddedBlocks]: s_a, each 8 in kHaddOrder
    const std::int8_t* row(std::int64_t r) const { return q.data() + r * chunks * 64; }
};

// Whether every value is finite (NaN and infinity take the float path, which propagates them).
inline bool allFinite(const float* values, std::int64_t count) {
    bool finite = true;
    for (std::int64_t i = 0; i < count; ++i) finite &= std::isfinite(values[i]);
    return finite;
}

// The buffers for `rows` quantized rows, zeroed (positions past K stay 0); `inKOrder`: each row's
// values in K order (columnTileProduct) rather than in the chunk layout (column).
inline QuantizedRows quantizedRowsFor(std::int64_t rows, const Int4Weights& w,
                                      bool inKOrder = false) {
    QuantizedRows out;
    out.rows = rows;
    out.inKOrder = inKOrder;
    out.chunks = w.chunks();
    out.kBlocks = w.kBlocks;
    out.paddedBlocks = (w.kBlocks + 7) / 8 * 8;
    out.q.assign(static_cast<std::size_t>(rows * out.chunks * 64), 0);
    out.blockScale.assign(static_cast<std::size_t>(rows * w.kBlocks), 0.0f);
    out.correction.assign(static_cast<std::size_t>(rows * out.paddedBlocks), 0.0f);
    if (inKOrder) return out;  // the column tiles read blockScale and correction only
    out.laneScale.assign(static_cast<std::size_t>(rows * out.chunks * 8), 0.0f);
    out.haddScale.assign(static_cast<std::size_t>(rows * out.paddedBlocks), 0.0f);
    return out;
}

// Quantizes row r of A (`a` row-major, K floats a row) into `out` (made by quantizedRowsFor);
// rows are independent, so callers may quantize them on several threads.
inline void quantizeRow(const float* a, std::int64_t r, const Int4Weights& w, QuantizedRows& out) {
    const float* src = a + r * w.k;
    std::int8_t* dst = out.q.data() + r * out.chunks * 64;
    float* scale = out.blockScale.data() + r * w.kBlocks;
    float* correction = out.correction.data() + r * out.paddedBlocks;
    for (std::int64_t b = 0; b < w.kBlocks; ++b) {
        const std::int64_t base = b * w.blockSize;
        const std::int64_t len = std::min(w.blockSize, w.k - base);
        float amax = 0.0f;
        for (std::int64_t i = 0; i < len; ++i) amax = std::max(amax, std::fabs(src[base + i]));
        const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
        std::int32_t sum = 0;
        for (std::int64_t i = 0; i < len; ++i) {
            const std::int64_t pos = base + i;
            // Finite A (the caller's guard) gives |scaled| <= 127 but where 127 / max|a|
            // overflows (max|a| below ~3.7e-37); clamped, so no value is out of int8.
            const float scaled = std::nearbyint(src[pos] * inverse);
            const std::int32_t value = scaled >= 127.0f    ? 127
                                       : scaled <= -127.0f ? -127
                                       : scaled == scaled  ? static_cast<std::int32_t>(scaled)
                                                           : 0;
            sum += value;
            dst[out.inKOrder ? pos : pos / 64 * 64 + pos % 2 * 32 + pos % 64 / 2] =
                static_cast<std::int8_t>(value);
        }
        scale[b] = amax / 127.0f;
        correction[b] = scale[b] * static_cast<float>(sum);
    }
    if (out.inKOrder) return;  // no lane or hadd scales (quantizedRowsFor)
    float* hadd = out.haddScale.data() + r * out.paddedBlocks;
    for (std::int64_t b = 0; b + 8 <= w.kBlocks; b += 8)
        for (int j = 0; j < 8; ++j) hadd[b + j] = scale[b + kHaddOrder[j]];
    float* lanes = out.laneScale.data() + r * out.chunks * 8;
    for (std::int64_t c = 0; c < out.chunks; ++c)
        for (std::int64_t l = 0; l < 8; ++l) {
            const std::int64_t block = (c * 32 + l * 4) / w.blob;
            lanes[c * 8 + l] = block < w.kBlocks ? scale[block] : 0.0f;
        }
}

// Quantizes `rows` rows of K floats (row-major) for the weights' geometry.
inline QuantizedRows quantizeRows(const float* a, std::int64_t rows, const Int4Weights& w) {
    QuantizedRows out = quantizedRowsFor(rows, w);
    for (std::int64_t r = 0; r < rows; ++r) quantizeRow(a, r, w, out);
    return out;
}

// out[i] for i < count = row r0 + i of A times column `column` of the weights.
inline void columnScalar(const QuantizedRows& a, std::int64_t r0, int count, const Int4Weights& w,
                         std::int64_t column, float* out) {
    const std::uint8_t* q = w.packed + column * w.bytesPerColumn();
    const float* sw = w.scales + column * w.kBlocks;
    for (int i = 0; i < count; ++i) {
        const std::int8_t* ar = a.row(r0 + i);
        const float* sa = a.blockScale.data() + (r0 + i) * a.kBlocks;
        const float* correction = a.correction.data() + (r0 + i) * a.paddedBlocks;
        float total = 0.0f, corrected = 0.0f;
        for (std::int64_t b = 0; b < w.kBlocks; ++b) {
            std::int32_t dot = 0;
            for (std::int64_t j = b * w.blob; j < (b + 1) * w.blob; ++j) {
                const std::int8_t* chunk = ar + j / 32 * 64 + j % 32;
                dot += (q[j] & 15) * chunk[0] + (q[j] >> 4) * chunk[32];
            }
            total += static_cast<float>(dot) * sa[b] * sw[b];
            corrected += correction[b] * (sw[b] * w.zeroPoint(column, b));
        }
        out[i] = total - corrected;
    }
}

#ifdef __AVX2__
namespace detail {

inline float horizontalSum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The products of 32 packed bytes (chunk c) with rows r0 .. r0 + Rows - 1 as int16 pair sums:
// lane m of pairs[r] holds bytes 2m and 2m + 1 (both nibbles), at most 2 * 2 * 15 * 127 = 7620.
template <int Rows>
inline void chunkPairs(__m256i bytes, const QuantizedRows& a, std::int64_t r0, std::int64_t c,
                       __m256i* pairs) {
    const __m256i low = _mm256_set1_epi8(15);
    const __m256i lo = _mm256_and_si256(bytes, low);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low);
    for (int r = 0; r < Rows; ++r) {
        const std::int8_t* ar = a.row(r0 + r) + c * 64;
        const __m256i even = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar));
        const __m256i odd = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 32));
        pairs[r] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, even), _mm256_maddubs_epi16(hi, odd));
    }
}

// The same widened to int32 (lane l: bytes 4l .. 4l + 3) and added to sums.
template <int Rows>
inline void chunkProducts(__m256i bytes, const QuantizedRows& a, std::int64_t r0, std::int64_t c,
                          __m256i* sums) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i pairs[Rows];
    chunkPairs<Rows>(bytes, a, r0, c, pairs);
    for (int r = 0; r < Rows; ++r)
        sums[r] = _mm256_add_epi32(sums[r], _mm256_madd_epi16(pairs[r], ones));
}

// The weights' scale of each int32 lane of a chunk whose first block is `first`; `Tail`: only
// `available` blocks remain (the last chunk of a column).
template <int Blob, bool Tail>
inline __m256 laneWeightScales(const float* sw, std::int64_t first, std::int64_t available) {
    if constexpr (Blob >= 32) {
        return _mm256_set1_ps(sw[first]);
    } else {
        constexpr int kBlocksPerChunk = 32 / Blob;
        __m128 picked;
        if constexpr (Tail) {
            float copy[4] = {};
            std::memcpy(
                copy, sw + first,
                static_cast<std::size_t>(std::min<std::int64_t>(kBlocksPerChunk, available)) *
                    sizeof(float));
            picked = _mm_loadu_ps(copy);
        } else if constexpr (Blob == 16) {
            picked =
                _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sw + first)));
        } else {
            picked = _mm_loadu_ps(sw + first);
        }
        const __m256i index = Blob == 16 ? _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1)
                                         : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(picked), index);
    }
}

// How far ahead of the bytes it reads the kernel asks for the packed weights (the next columns':
// a column's bytes follow the previous one's). The decode step streams every weight once; on
// the 2-core Zen 3 the hardware's prefetch alone left it at 11 GB/s on one thread, 56% of what a
// plain read reaches; asking 16 KB ahead ran the step of a 0.5 GB int4 decoder in 16.7-17.8 ms
// instead of 21-27 (1 thread) and mostly 10.6-12.4 instead of 14.0-15.8 (2 threads); 0.5 to 8 KB
// gained less, 32 KB no more (docs/performance.md).
constexpr std::int64_t kPrefetchAheadBytes = 16384;

// A prefetch of `offset` bytes past `base`: an address, never dereferenced, that may lie past the
// weights' end (a hint that cannot fault), so it is formed as an integer.
inline void prefetchWeights(const std::uint8_t* base, std::int64_t offset) {
    const auto address =
        reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(offset);
    _mm_prefetch(reinterpret_cast<const char*>(address), _MM_HINT_T0);
}

// The VNNI form of the block-32 loop where the build has it (a -march=native build on a CPU with
// AVX512-VNNI or AVX-VNNI): acc + the sums of four u8 x s8 products per int32 lane.
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define ONNXLENS_NBITS_VNNI 1
inline __m256i dotBytes(__m256i acc, __m256i u, __m256i s) {
    return _mm256_dpbusd_epi32(acc, u, s);
}
#elif defined(__AVXVNNI__)
#define ONNXLENS_NBITS_VNNI 1
inline __m256i dotBytes(__m256i acc, __m256i u, __m256i s) {
    return _mm256_dpbusd_avx_epi32(acc, u, s);
}
#else
#define ONNXLENS_NBITS_VNNI 0
#endif

// Blob: 8, 16, or 32 for every larger blob (then whole chunks per block).
template <int Rows, int Blob>
void columnAvx2(const QuantizedRows& a, std::int64_t r0, const Int4Weights& w, std::int64_t column,
                float* out) {
    const std::uint8_t* q = w.packed + column * w.bytesPerColumn();
    const float* sw = w.scales + column * w.kBlocks;
    const std::int64_t bytes = w.bytesPerColumn();
    const std::int64_t fullChunks = bytes / 32;
    const std::int64_t chunksPerBlock = Blob >= 32 ? w.blob / 32 : 1;
    constexpr std::int64_t kBlocksPerChunk = Blob >= 32 ? 1 : 32 / Blob;
    __m256 acc[Rows];
    for (int r = 0; r < Rows; ++r) acc[r] = _mm256_setzero_ps();
    auto finishChunk = [&](std::int64_t c, const __m256i* sums, auto tail) {
        const std::int64_t first = Blob >= 32 ? c / chunksPerBlock : c * kBlocksPerChunk;
        const __m256 s =
            laneWeightScales<Blob, decltype(tail)::value>(sw, first, w.kBlocks - first);
        for (int r = 0; r < Rows; ++r) {
            const __m256 sa = _mm256_loadu_ps(a.laneScale.data() + (r0 + r) * a.chunks * 8 + c * 8);
            acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sums[r]), sa), s, acc[r]);
        }
    };
    std::int64_t c = 0;
    if constexpr (Blob == 16) {
        // Four chunks (eight blocks of 32) at a time: three horizontal adds of the int16 pair
        // sums and one widening leave one int32 lane per block, in the order of kHaddOrder, so
        // the floats are converted and scaled once per eight blocks instead of once per two.
        const __m256i order =
            _mm256_setr_epi32(kHaddOrder[0], kHaddOrder[1], kHaddOrder[2], kHaddOrder[3],
                              kHaddOrder[4], kHaddOrder[5], kHaddOrder[6], kHaddOrder[7]);
        const __m256i ones = _mm256_set1_epi16(1);
        auto load = [&](std::int64_t chunk) {
            return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + chunk * 32));
        };
        // Accumulators of this loop's own (acc escapes into finishChunk, which kept it in memory).
        __m256 sum[Rows];
        for (int r = 0; r < Rows; ++r) sum[r] = acc[r];
        for (; c + 4 <= fullChunks; c += 4) {
            prefetchWeights(q, kPrefetchAheadBytes + c * 32);  // two lines per four chunks
            prefetchWeights(q, kPrefetchAheadBytes + c * 32 + 64);
            // The nibbles of the four chunks once, then row by row: int16 sums of 4 bytes (<=
            // 15240), then of 8 (<= 30480), exact, then int32 per block. A row's pair sums are
            // folded as they come, so four rows' accumulators stay in registers.
            const __m256i low = _mm256_set1_epi8(15);
            __m256i lo[4], hi[4];
            for (int j = 0; j < 4; ++j) {
                const __m256i bytes = load(c + j);
                lo[j] = _mm256_and_si256(bytes, low);
                hi[j] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low);
            }
            const __m256 s = _mm256_permutevar8x32_ps(_mm256_loadu_ps(sw + c * 2), order);
            for (int r = 0; r < Rows; ++r) {
                const std::int8_t* ar = a.row(r0 + r) + c * 64;
                auto even = [&](int j) {
                    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + j * 64));
                };
                auto odd = [&](int j) {
                    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + j * 64 + 32));
                };
#if ONNXLENS_NBITS_VNNI
                // VNNI: each int32 lane sums its four products at once (exactly: no int16 step);
                // two horizontal adds then leave one lane per block, in kHaddOrder as well.
                (void)ones;
                auto quads = [&](int j) {
                    return dotBytes(dotBytes(_mm256_setzero_si256(), lo[j], even(j)), hi[j],
                                    odd(j));
                };
                const __m256i blocks = _mm256_hadd_epi32(_mm256_hadd_epi32(quads(0), quads(1)),
                                                         _mm256_hadd_epi32(quads(2), quads(3)));
#else
                auto pairs = [&](int j) {
                    return _mm256_add_epi16(_mm256_maddubs_epi16(lo[j], even(j)),
                                            _mm256_maddubs_epi16(hi[j], odd(j)));
                };
                const __m256i half = _mm256_hadd_epi16(pairs(0), pairs(1));
                const __m256i blocks = _mm256_madd_epi16(
                    _mm256_hadd_epi16(half, _mm256_hadd_epi16(pairs(2), pairs(3))), ones);
#endif
                const __m256 sa =
                    _mm256_loadu_ps(a.haddScale.data() + (r0 + r) * a.paddedBlocks + c * 2);
                sum[r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(blocks), sa), s, sum[r]);
            }
        }
        for (int r = 0; r < Rows; ++r) acc[r] = sum[r];
    }
    for (; c < fullChunks; c += chunksPerBlock) {
        for (std::int64_t j = 0; j < chunksPerBlock; j += 2)
            prefetchWeights(q, kPrefetchAheadBytes + (c + j) * 32);
        __m256i sums[Rows];
        for (int r = 0; r < Rows; ++r) sums[r] = _mm256_setzero_si256();
        for (std::int64_t j = 0; j < chunksPerBlock; ++j)
            chunkProducts<Rows>(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + (c + j) * 32)), a, r0,
                c + j, sums);
        finishChunk(c, sums, std::false_type{});
    }
    if (fullChunks * 32 < bytes) {  // blobs of 8 or 16 bytes: the last blocks, zero-padded
        alignas(32) std::uint8_t tail[32] = {};
        std::memcpy(tail, q + fullChunks * 32, static_cast<std::size_t>(bytes - fullChunks * 32));
        __m256i sums[Rows];
        for (int r = 0; r < Rows; ++r) sums[r] = _mm256_setzero_si256();
        chunkProducts<Rows>(_mm256_load_si256(reinterpret_cast<const __m256i*>(tail)), a, r0,
                            fullChunks, sums);
        finishChunk(fullChunks, sums, std::true_type{});
    }
    // The zero points: sum_b (s_a * sum(q_a)) * (s_w * zero_point), eight blocks at a time.
    __m256 corr[Rows];
    for (int r = 0; r < Rows; ++r) corr[r] = _mm256_setzero_ps();
    const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    std::int64_t b = 0;
    for (; b + 8 <= w.kBlocks; b += 8) {
        __m256 zero;
        if (w.floatZero) {
            zero = _mm256_loadu_ps(w.floatZero + column * w.kBlocks + b);
        } else if (w.packedZero) {
            std::uint32_t word = 0;
            std::memcpy(&word, w.packedZero + column * w.zeroPointBlob + b / 2, sizeof word);
            const __m256i nibbles = _mm256_and_si256(
                _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(word)), shifts),
                _mm256_set1_epi32(15));
            zero = _mm256_cvtepi32_ps(nibbles);
        } else {
            zero = _mm256_set1_ps(8.0f);
        }
        const __m256 sz = _mm256_mul_ps(_mm256_loadu_ps(sw + b), zero);
        for (int r = 0; r < Rows; ++r)
            corr[r] = _mm256_fmadd_ps(
                _mm256_loadu_ps(a.correction.data() + (r0 + r) * a.paddedBlocks + b), sz, corr[r]);
    }
    float tail[Rows] = {};
    for (; b < w.kBlocks; ++b) {
        const float sz = sw[b] * w.zeroPoint(column, b);
        for (int r = 0; r < Rows; ++r)
            tail[r] += a.correction[static_cast<std::size_t>((r0 + r) * a.paddedBlocks + b)] * sz;
    }
    for (int r = 0; r < Rows; ++r)
        out[r] = horizontalSum(acc[r]) - (horizontalSum(corr[r]) + tail[r]);
}

template <int Rows>
void columnAvx2Blob(const QuantizedRows& a, std::int64_t r0, const Int4Weights& w,
                    std::int64_t column, float* out) {
    if (w.blob == 8) return columnAvx2<Rows, 8>(a, r0, w, column, out);
    if (w.blob == 16) return columnAvx2<Rows, 16>(a, r0, w, column, out);
    return columnAvx2<Rows, 32>(a, r0, w, column, out);
}

}  // namespace detail
#endif

// out[i] for i < count (1 to 4) = row r0 + i of A times column `column`: the AVX2 kernel where
// the build has it, else the scalar loop (the same integers, the floats summed in another order).
inline void column(const QuantizedRows& a, std::int64_t r0, int count, const Int4Weights& w,
                   std::int64_t column, float* out) {
#ifdef __AVX2__
    switch (count) {
        case 1:
            return detail::columnAvx2Blob<1>(a, r0, w, column, out);
        case 2:
            return detail::columnAvx2Blob<2>(a, r0, w, column, out);
        case 3:
            return detail::columnAvx2Blob<3>(a, r0, w, column, out);
        default:
            return detail::columnAvx2Blob<4>(a, r0, w, column, out);
    }
#else
    columnScalar(a, r0, count, w, column, out);
#endif
}

// ---- Many rows (a prefill) on AVX-512 with VNNI: columns in the vector lanes ------------------
// `column` above keeps K in the lanes, so every (row, column, block) product is reduced across
// lanes (horizontal adds) and scaled on its own; for a 128-token prefill that was most of the
// kernel's time. Here a tile of 16 columns is unpacked once into quads x columns: int32 lane j of
// quad g holds column j's four nibbles at K positions 4g .. 4g + 3. One vpdpbusd with four of a
// row's int8 values broadcast then adds 64 exact products into 16 columns' int32 sums, and each
// block is scaled once per row and 16 columns (one convert, two FMAs). The unpacked tile (16 bytes
// per K position) is reused by every row; the rows' int8 values are in K order (inKOrder).
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512F__)
#define ONNXLENS_NBITS_COLUMN_TILES 1
constexpr std::int64_t kTileColumns = 16;

// One thread's unpacked tile: quads [k_chunks * 8][16] int32 (k_chunks = 16-byte pieces of a
// column), scales and scale * zero point [k_blocks][16]; columns past N are 0.
struct ColumnTile {
    std::vector<std::int32_t> quads;
    std::vector<float> scale, scaledZero;
};

namespace detail {

// src(c, g): where column c's quad g (of four) lies in two groups of four columns' quads
// (permutex2var's index: the first group 0-15, the second 16-31; in a group, column L's quads are
// its 128-bit lane L).
inline __m512i quadPairIndex(int first, int second) {
    alignas(64) std::int32_t index[16];
    for (int i = 0; i < 16; ++i) {
        const int c = i % 8, g = i < 8 ? first : second;
        index[i] = (c < 4 ? 0 : 16) + 4 * (c % 4) + g;
    }
    return _mm512_load_si512(index);
}

}  // namespace detail

// Unpacks columns col0 .. col0 + 15 of the weights into `tile`.
inline void unpackColumnTile(const Int4Weights& w, std::int64_t col0, ColumnTile& tile) {
    const std::int64_t bytes = w.bytesPerColumn(), pieces = (bytes + 15) / 16;
    tile.quads.resize(static_cast<std::size_t>(pieces * 8 * kTileColumns));
    tile.scale.assign(static_cast<std::size_t>(w.kBlocks * kTileColumns), 0.0f);
    tile.scaledZero.assign(static_cast<std::size_t>(w.kBlocks * kTileColumns), 0.0f);
    const std::int64_t columns = std::min(kTileColumns, w.n - col0);
    for (std::int64_t j = 0; j < columns; ++j)
        for (std::int64_t b = 0; b < w.kBlocks; ++b) {
            const float scale = w.scales[(col0 + j) * w.kBlocks + b];
            tile.scale[static_cast<std::size_t>(b * kTileColumns + j)] = scale;
            tile.scaledZero[static_cast<std::size_t>(b * kTileColumns + j)] =
                scale * w.zeroPoint(col0 + j, b);
        }
    const __m512i low = _mm512_set1_epi8(15);
    const __m512i pair01 = detail::quadPairIndex(0, 1), pair23 = detail::quadPairIndex(2, 3);
    for (std::int64_t p = 0; p < pieces; ++p) {
        const std::int64_t available = std::min<std::int64_t>(16, bytes - p * 16);
        const auto mask = static_cast<__mmask16>((1u << available) - 1u);
        // Per group of four columns: their nibbles in K order, quads 0-3 and 4-7 of each column
        // in its 128-bit lane.
        __m512i first[4], second[4];
        for (int group = 0; group < 4; ++group) {
            __m128i piece[4];
            for (int lane = 0; lane < 4; ++lane) {
                const std::int64_t j = group * 4 + lane;
                piece[lane] =
                    j < columns ? _mm_maskz_loadu_epi8(mask, w.packed + (col0 + j) * bytes + p * 16)
                                : _mm_setzero_si128();
            }
            const __m512i bytesOf = _mm512_inserti32x4(
                _mm512_inserti32x4(
                    _mm512_inserti32x4(_mm512_castsi128_si512(piece[0]), piece[1], 1), piece[2], 2),
                piece[3], 3);
            const __m512i lo = _mm512_and_si512(bytesOf, low);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bytesOf, 4), low);
            first[group] = _mm512_unpacklo_epi8(lo, hi);
            second[group] = _mm512_unpackhi_epi8(lo, hi);
        }
        // Transposed: quad g's 16 columns from the four groups, two quads at a time.
        std::int32_t* out = tile.quads.data() + p * 8 * kTileColumns;
        auto transpose = [&](const __m512i* groups, int quadBase) {
            for (int pair = 0; pair < 2; ++pair) {
                const __m512i index = pair == 0 ? pair01 : pair23;
                const __m512i left = _mm512_permutex2var_epi32(groups[0], index, groups[1]);
                const __m512i right = _mm512_permutex2var_epi32(groups[2], index, groups[3]);
                const int g = quadBase + 2 * pair;
                _mm512_storeu_si512(out + g * kTileColumns,
                                    _mm512_shuffle_i64x2(left, right, _MM_SHUFFLE(1, 0, 1, 0)));
                _mm512_storeu_si512(out + (g + 1) * kTileColumns,
                                    _mm512_shuffle_i64x2(left, right, _MM_SHUFFLE(3, 2, 3, 2)));
            }
        };
        transpose(first, 0);
        transpose(second, 4);
    }
}

namespace detail {

// y[r][col0 .. col0 + 15] for rows r0 .. r0 + Rows - 1 (A in K order) from an unpacked tile.
template <int Rows>
void tileRows(const QuantizedRows& a, std::int64_t r0, const Int4Weights& w, const ColumnTile& tile,
              std::int64_t col0, float* y) {
    const std::int64_t quadsPerBlock = w.blockSize / 4;
    __m512 acc[Rows];
    for (int r = 0; r < Rows; ++r) acc[r] = _mm512_setzero_ps();
    const std::int8_t* rows[Rows];
    for (int r = 0; r < Rows; ++r) rows[r] = a.row(r0 + r);
    for (std::int64_t b = 0; b < w.kBlocks; ++b) {
        __m512i dot[Rows];
        for (int r = 0; r < Rows; ++r) dot[r] = _mm512_setzero_si512();
        const std::int32_t* quads = tile.quads.data() + b * quadsPerBlock * kTileColumns;
        const std::int64_t first = b * quadsPerBlock * 4;
        for (std::int64_t g = 0; g < quadsPerBlock; ++g) {
            const __m512i weights = _mm512_loadu_si512(quads + g * kTileColumns);
            for (int r = 0; r < Rows; ++r) {
                std::int32_t four;
                std::memcpy(&four, rows[r] + first + g * 4, sizeof four);
                dot[r] = _mm512_dpbusd_epi32(dot[r], weights, _mm512_set1_epi32(four));
            }
        }
        const __m512 sw = _mm512_loadu_ps(tile.scale.data() + b * kTileColumns);
        const __m512 swz = _mm512_loadu_ps(tile.scaledZero.data() + b * kTileColumns);
        for (int r = 0; r < Rows; ++r) {
            const float sa = a.blockScale[static_cast<std::size_t>((r0 + r) * a.kBlocks + b)];
            const float correction =
                a.correction[static_cast<std::size_t>((r0 + r) * a.paddedBlocks + b)];
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r]),
                                     _mm512_mul_ps(_mm512_set1_ps(sa), sw), acc[r]);
            acc[r] = _mm512_fnmadd_ps(_mm512_set1_ps(correction), swz, acc[r]);
        }
    }
    const std::int64_t columns = std::min(kTileColumns, w.n - col0);
    const auto mask = static_cast<__mmask16>((1u << columns) - 1u);
    for (int r = 0; r < Rows; ++r) _mm512_mask_storeu_ps(y + (r0 + r) * w.n + col0, mask, acc[r]);
}

}  // namespace detail

// Y's columns col0 .. col0 + 15 (those below N) for every row of `a` (quantized in K order),
// y row-major [rows, N]; `tile` is the calling thread's scratch.
inline void columnTileProduct(const QuantizedRows& a, const Int4Weights& w, std::int64_t col0,
                              ColumnTile& tile, float* y) {
    unpackColumnTile(w, col0, tile);
    constexpr int kRows = 8;
    std::int64_t r0 = 0;
    for (; r0 + kRows <= a.rows; r0 += kRows) detail::tileRows<kRows>(a, r0, w, tile, col0, y);
    switch (a.rows - r0) {
        case 1:
            return detail::tileRows<1>(a, r0, w, tile, col0, y);
        case 2:
            return detail::tileRows<2>(a, r0, w, tile, col0, y);
        case 3:
            return detail::tileRows<3>(a, r0, w, tile, col0, y);
        case 4:
            return detail::tileRows<4>(a, r0, w, tile, col0, y);
        case 5:
            return detail::tileRows<5>(a, r0, w, tile, col0, y);
        case 6:
            return detail::tileRows<6>(a, r0, w, tile, col0, y);
        case 7:
            return detail::tileRows<7>(a, r0, w, tile, col0, y);
        default:
            return;
    }
}
#else
#define ONNXLENS_NBITS_COLUMN_TILES 0
#endif

}  // namespace onnxlens::engine::ops::nbits4
