// com.microsoft MatMulNBits: Y [..., N] = A [..., K] x dequantize(B)^T (+ bias), B the weights
// quantized block-wise along K to 2, 4 or 8 bits, packed uint8 [N, k_blocks, blob_size] with the
// first value of a byte in its low bits; scales [N, k_blocks] (or flat) of A's type; zero points
// packed uint8 [N, ceil(k_blocks * bits / 8)] the same way, or unpacked of A's type, default
// 2^(bits - 1); w = (q - zero_point) * scale. accuracy_level 4 quantizes A to int8 per block of
// block_size along K first (symmetric, scale max|a| / 127, round half to even) as ONNX Runtime's
// int8 kernels do; other levels compute in float.
//
// The weights stay packed: nothing dequantized is kept between runs.
// - accuracy_level 4 with 4 bits (no g_idx): A quantized to int8, exact int32 block products of
//   the nibbles unpacked in registers (MsMatMulNBitsInt8.h), parallel over N; for many rows in
//   tiles of columns, each tile's packed bytes reused by every row (on AVX-512 VNNI, tiles of 16
//   columns unpacked once with the columns in the vector lanes). 2 and 8 bits at level 4 put
//   A on the int8 grid (quantizeRowsToInt8Grid) and take the float paths below.
// - A few rows (decode): one pass over B per group of up to four rows, each column's blocks
//   unpacked in registers and dotted with A (permuted once per run so that the values of one
//   byte position line up), parallel over N. Per block the zero point comes off as
//   scale * zero_point * sum(A block), so the inner loop is a pure product of unpacked integers.
// - More rows (prefill), or g_idx: tiles of columns dequantized to a small float scratch and
//   multiplied by Eigen's GEMM, tiles in parallel.
// g_idx (deprecated; 4 bits only, as ONNX Runtime): row k of B takes the scale and zero point of
// block g_idx[k]. ONNX Runtime 1.30's CPU kernel ignores packed uint8 zero points when g_idx is
// given (it uses 8; checked on one-node models): here they count, as without g_idx.
#include <Eigen/Core>
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "MsMatMulNBitsInt8.h"
#include "OpFamilies.h"
#include "ShapeManipulationCopy.h"

namespace onnxlens::engine::ops {
namespace {

using RowMajorMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows up to which the streaming kernel runs (above, the tiled GEMM).
constexpr std::int64_t kStreamingRows = 8;
// Columns per tile of the GEMM path (each tile's product packs A again: wide tiles pack it less).
constexpr std::int64_t kTileColumns = 128;
// Attributes above this are refused before any size is computed from them.
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 40;

// The geometry the attributes fix.
struct NBitsGeometry {
    std::int64_t k = 0, n = 0, bits = 4, blockSize = 32;
    std::int64_t kBlocks = 0, blobSize = 0, zeroPointBlob = 0;
    std::int64_t valuesPerByte() const { return 8 / bits; }
};

NBitsGeometry geometryOf(const NodeInfo& node) {
    NBitsGeometry g;
    g.k = node.getInt("K");
    g.n = node.getInt("N");
    g.bits = node.getInt("bits", 4);
    g.blockSize = node.getInt("block_size");
    require(g.bits == 2 || g.bits == 4 || g.bits == 8, [&] {
        return "MatMulNBits: attribute bits must be 2, 4 or 8, got " + std::to_string(g.bits);
    });
    require(g.blockSize >= 16 && g.blockSize <= (std::int64_t{1} << 30) &&
                (g.blockSize & (g.blockSize - 1)) == 0,
            [&] {
                return "MatMulNBits: attribute block_size must be a power of 2, at least 16, got " +
                       std::to_string(g.blockSize);
            });
    require(g.k >= 1 && g.k <= kMaxDimension, [&] {
        return "MatMulNBits: attribute K must be in [1, 2^40], got " + std::to_string(g.k);
    });
    require(g.n >= 1 && g.n <= kMaxDimension, [&] {
        return "MatMulNBits: attribute N must be in [1, 2^40], got " + std::to_string(g.n);
    });
    g.kBlocks = (g.k + g.blockSize - 1) / g.blockSize;
    g.blobSize = g.blockSize * g.bits / 8;
    g.zeroPointBlob = (g.kBlocks * g.bits + 7) / 8;
    // The packed weights' size must be representable (B's shape is checked against it).
    checkedMultiply(checkedMultiply(g.n, g.kBlocks, "MatMulNBits: N x k_blocks"), g.blobSize,
                    "MatMulNBits: the packed weights of attributes K and N");
    return g;
}

// A tensor of shape [a * b] or [a, b].
bool hasFlatOrMatrixShape(const Tensor& t, std::int64_t a, std::int64_t b) {
    return t.shape() == Shape{a * b} || t.shape() == Shape{a, b};
}

// The per-run view of the quantization parameters: float scales, and the zero point of a block.
struct NBitsParams {
    const NBitsGeometry* g = nullptr;
    const float* scales = nullptr;             // [N * k_blocks]
    const std::uint8_t* packedZero = nullptr;  // [N, zeroPointBlob], or null
    const float* floatZero = nullptr;          // [N * k_blocks], or null
    const std::int32_t* groupIndex = nullptr;  // [K] (or padded), or null
    float defaultZero = 8.0f;

    float zeroPoint(std::int64_t column, std::int64_t block) const {
        if (floatZero) return floatZero[column * g->kBlocks + block];
        if (!packedZero) return defaultZero;
        const std::int64_t bit = block * g->bits;
        const std::uint8_t byte = packedZero[column * g->zeroPointBlob + bit / 8];
        return static_cast<float>((byte >> (bit % 8)) & ((1 << g->bits) - 1));
    }
    float scale(std::int64_t column, std::int64_t block) const {
        return scales[column * g->kBlocks + block];
    }
};

// ---- The streaming kernel (a few rows) ---------------------------------------------------------
// A is permuted per block: position p * blob + j holds A[block start + j * valuesPerByte + p] (0
// past K), so that the p-th value of byte j of a blob multiplies it.

using V8f = float __attribute__((vector_size(32)));
using V8i = std::int32_t __attribute__((vector_size(32)));
using V8u8 = std::uint8_t __attribute__((vector_size(8)));

inline V8f loadV8f(const float* p) {
    V8f v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Eight bytes widened to int32 lanes (GCC builds the generic conversion lane by lane).
inline V8i widenBytes(const std::uint8_t* p) {
#ifdef __AVX2__
    return reinterpret_cast<V8i>(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
    V8u8 bytes;
    std::memcpy(&bytes, p, sizeof bytes);
    return __builtin_convertvector(bytes, V8i);
#endif
}

inline float horizontalSum(V8f v) {
    float s = 0.0f;
    for (int i = 0; i < 8; ++i) s += v[i];
    return s;
}

// For each row r < Rows: out[r] = sum over the blocks of column `column` of
// scale * (dot(permuted A block, q) - zero_point * sum(A block)).
template <int Rows, int Bits>
void streamColumn(const NBitsParams& params, const std::uint8_t* packed, const float* const* aPerm,
                  const float* const* aSums, std::int64_t column, float* out) {
    const NBitsGeometry& g = *params.g;
    constexpr int kPerByte = 8 / Bits;
    constexpr std::int32_t kMask = (1 << Bits) - 1;
    const std::int64_t blob = g.blobSize;
    V8f total[Rows];
    float correction[Rows];
    for (int r = 0; r < Rows; ++r) {
        total[r] = V8f{};
        correction[r] = 0.0f;
    }
    const std::uint8_t* q = packed + column * g.kBlocks * blob;
    for (std::int64_t b = 0; b < g.kBlocks; ++b, q += blob) {
        V8f acc[Rows];
        for (int r = 0; r < Rows; ++r) acc[r] = V8f{};
        const std::int64_t base = b * g.blockSize;
        for (std::int64_t j = 0; j < blob; j += 8) {
            const V8i wide = widenBytes(q + j);
            for (int p = 0; p < kPerByte; ++p) {
                const V8f w = __builtin_convertvector((wide >> (p * Bits)) & kMask, V8f);
                for (int r = 0; r < Rows; ++r)
                    acc[r] += loadV8f(aPerm[r] + base + p * blob + j) * w;
            }
        }
        const float s = params.scale(column, b);
        const float sz = s * params.zeroPoint(column, b);
        for (int r = 0; r < Rows; ++r) {
            total[r] += acc[r] * s;
            correction[r] += sz * aSums[r][b];
        }
    }
    for (int r = 0; r < Rows; ++r) out[r] = horizontalSum(total[r]) - correction[r];
}

// The scalar form of streamColumn for blobs of fewer than 8 bytes (2 bits, block 16).
void streamColumnScalar(const NBitsParams& params, const std::uint8_t* packed,
                        const float* const* aPerm, const float* const* aSums, int rows,
                        std::int64_t column, float* out) {
    const NBitsGeometry& g = *params.g;
    const auto perByte = static_cast<int>(g.valuesPerByte());
    const int bits = static_cast<int>(g.bits);
    const int mask = (1 << bits) - 1;
    for (int r = 0; r < rows; ++r) out[r] = 0.0f;
    const std::uint8_t* q = packed + column * g.kBlocks * g.blobSize;
    for (std::int64_t b = 0; b < g.kBlocks; ++b, q += g.blobSize) {
        const std::int64_t base = b * g.blockSize;
        const float s = params.scale(column, b);
        const float z = params.zeroPoint(column, b);
        for (int r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (std::int64_t j = 0; j < g.blobSize; ++j)
                for (int p = 0; p < perByte; ++p)
                    acc += aPerm[r][base + p * g.blobSize + j] *
                           static_cast<float>((q[j] >> (p * bits)) & mask);
            out[r] += s * (acc - z * aSums[r][b]);
        }
    }
}

template <int Rows>
void streamColumnDispatch(const NBitsParams& params, const std::uint8_t* packed,
                          const float* const* aPerm, const float* const* aSums, std::int64_t column,
                          float* out) {
    switch (params.g->bits) {
        case 2:
            return streamColumn<Rows, 2>(params, packed, aPerm, aSums, column, out);
        case 4:
            return streamColumn<Rows, 4>(params, packed, aPerm, aSums, column, out);
        default:
            return streamColumn<Rows, 8>(params, packed, aPerm, aSums, column, out);
    }
}

// y [rows, N] (+= nothing: written) for the float rows a [rows, K], rows <= kStreamingRows.
void streamingProduct(KernelContext& ctx, const NBitsParams& params, const std::uint8_t* packed,
                      const float* a, std::int64_t rows, float* y) {
    const NBitsGeometry& g = *params.g;
    const std::int64_t padded = g.kBlocks * g.blockSize;
    const std::int64_t perByte = g.valuesPerByte();
    std::vector<float> perm(static_cast<std::size_t>(rows * padded), 0.0f);
    std::vector<float> sums(static_cast<std::size_t>(rows * g.kBlocks), 0.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = a + r * g.k;
        float* pr = perm.data() + r * padded;
        float* sr = sums.data() + r * g.kBlocks;
        for (std::int64_t b = 0; b < g.kBlocks; ++b) {
            const std::int64_t base = b * g.blockSize;
            const std::int64_t len = std::min(g.blockSize, g.k - base);
            float sum = 0.0f;
            for (std::int64_t i = 0; i < len; ++i) {
                pr[base + (i % perByte) * g.blobSize + i / perByte] = row[base + i];
                sum += row[base + i];
            }
            sr[b] = sum;
        }
    }
    const bool vectorised = g.blobSize % 8 == 0;
    const double cost = 2.0 * static_cast<double>(rows * padded);
    ctx.pool().parallelFor(g.n, cost, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r0 = 0; r0 < rows; r0 += 4) {
            const int group = static_cast<int>(std::min<std::int64_t>(4, rows - r0));
            std::array<const float*, 4> ap{}, as{};
            for (int r = 0; r < group; ++r) {
                ap[static_cast<std::size_t>(r)] = perm.data() + (r0 + r) * padded;
                as[static_cast<std::size_t>(r)] = sums.data() + (r0 + r) * g.kBlocks;
            }
            for (std::int64_t c = begin; c < end; ++c) {
                float out[4];
                if (!vectorised)
                    streamColumnScalar(params, packed, ap.data(), as.data(), group, c, out);
                else if (group == 1)
                    streamColumnDispatch<1>(params, packed, ap.data(), as.data(), c, out);
                else if (group == 2)
                    streamColumnDispatch<2>(params, packed, ap.data(), as.data(), c, out);
                else if (group == 3)
                    streamColumnDispatch<3>(params, packed, ap.data(), as.data(), c, out);
                else
                    streamColumnDispatch<4>(params, packed, ap.data(), as.data(), c, out);
                for (int r = 0; r < group; ++r) y[(r0 + r) * g.n + c] = out[r];
            }
        }
    });
}

// ---- The tiled GEMM (many rows, or g_idx) ------------------------------------------------------

template <int Bits>
void dequantizeBlock(const std::uint8_t* blob, std::int64_t blobSize, float s, float z,
                     float* out) {
    constexpr int kPerByte = 8 / Bits;
    constexpr int kMask = (1 << Bits) - 1;
    for (std::int64_t j = 0; j < blobSize; ++j)
        for (int p = 0; p < kPerByte; ++p)
            out[j * kPerByte + p] = (static_cast<float>((blob[j] >> (p * Bits)) & kMask) - z) * s;
}

// Columns [c0, c0 + count) of the dequantized weights, row-major [count, K], into `w`.
void dequantizeColumns(const NBitsParams& params, const std::uint8_t* packed, std::int64_t c0,
                       std::int64_t count, float* w) {
    const NBitsGeometry& g = *params.g;
    const auto perByte = g.valuesPerByte();
    const int bits = static_cast<int>(g.bits);
    const int mask = (1 << bits) - 1;
    for (std::int64_t c = 0; c < count; ++c) {
        const std::int64_t column = c0 + c;
        const std::uint8_t* q = packed + column * g.kBlocks * g.blobSize;
        float* out = w + c * g.k;
        for (std::int64_t b = 0; b < g.kBlocks; ++b) {
            const std::int64_t base = b * g.blockSize;
            const std::int64_t len = std::min(g.blockSize, g.k - base);
            const std::uint8_t* blob = q + b * g.blobSize;
            if (params.groupIndex) {  // each row of K names its own block's parameters
                for (std::int64_t i = 0; i < len; ++i) {
                    const auto value =
                        static_cast<float>((blob[i / perByte] >> ((i % perByte) * bits)) & mask);
                    const std::int64_t group = params.groupIndex[base + i];
                    out[base + i] =
                        (value - params.zeroPoint(column, group)) * params.scale(column, group);
                }
                continue;
            }
            const float s = params.scale(column, b), z = params.zeroPoint(column, b);
            if (len == g.blockSize) {
                if (bits == 4)
                    dequantizeBlock<4>(blob, g.blobSize, s, z, out + base);
                else if (bits == 2)
                    dequantizeBlock<2>(blob, g.blobSize, s, z, out + base);
                else
                    dequantizeBlock<8>(blob, g.blobSize, s, z, out + base);
                continue;
            }
            for (std::int64_t i = 0; i < len; ++i)
                out[base + i] =
                    (static_cast<float>((blob[i / perByte] >> ((i % perByte) * bits)) & mask) - z) *
                    s;
        }
    }
}

void tiledProduct(KernelContext& ctx, const NBitsParams& params, const std::uint8_t* packed,
                  const float* a, std::int64_t rows, float* y) {
    const NBitsGeometry& g = *params.g;
    const std::int64_t tiles = (g.n + kTileColumns - 1) / kTileColumns;
    const double cost = 2.0 * static_cast<double>(rows * g.k * kTileColumns);
    Eigen::Map<const RowMajorMatrixF> am(a, rows, g.k);
    ctx.pool().parallelFor(tiles, cost, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> scratch(static_cast<std::size_t>(kTileColumns * g.k));
        for (std::int64_t t = begin; t < end; ++t) {
            const std::int64_t c0 = t * kTileColumns;
            const std::int64_t count = std::min(kTileColumns, g.n - c0);
            dequantizeColumns(params, packed, c0, count, scratch.data());
            Eigen::Map<const RowMajorMatrixF> wm(scratch.data(), count, g.k);
            Eigen::Map<RowMajorMatrixF, 0, Eigen::OuterStride<>> ym(y + c0, rows, count,
                                                                    Eigen::OuterStride<>(g.n));
            ym.noalias() = am * wm.transpose();
        }
    });
}

// ---- accuracy_level 4: A quantized to int8 per block -------------------------------------------
// Each block of block_size values along K of each row becomes round(a / s) * s, s = max|a| / 127
// (0 for an all-zero block): the products of the int8 kernels, up to float rounding.
void quantizeRowsToInt8Grid(std::vector<float>& a, std::int64_t rows, std::int64_t k,
                            std::int64_t blockSize) {
    for (std::int64_t r = 0; r < rows; ++r) {
        float* row = a.data() + r * k;
        for (std::int64_t base = 0; base < k; base += blockSize) {
            const std::int64_t len = std::min(blockSize, k - base);
            float amax = 0.0f;
            for (std::int64_t i = 0; i < len; ++i) amax = std::max(amax, std::fabs(row[base + i]));
            const float scale = amax / 127.0f;
            const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
            for (std::int64_t i = 0; i < len; ++i)
                row[base + i] = std::nearbyint(row[base + i] * inverse) * scale;
        }
    }
}

// ---- accuracy_level 4 with 4 bits: integer block products (MsMatMulNBitsInt8.h) --------------
// Columns per task of the many-rows form: their packed bytes stay in cache across the rows.
constexpr std::int64_t kIntTileColumns = 32;

void int8Product(KernelContext& ctx, const nbits4::Int4Weights& w, const float* a,
                 std::int64_t rows, float* y) {
    // Many rows on AVX-512 with VNNI: tiles of 16 columns in the vector lanes, A in K order.
    const bool columnTiles = ONNXLENS_NBITS_COLUMN_TILES && rows > kStreamingRows;
    // A's rows quantized over the threads when there are many (a prefill's; ~8% of its time on
    // one thread otherwise at 2 threads).
    nbits4::QuantizedRows qa = nbits4::quantizedRowsFor(rows, w, columnTiles);
    ctx.pool().parallelFor(rows, 8.0 * static_cast<double>(w.k),
                           [&](std::int64_t begin, std::int64_t end) {
                               for (std::int64_t r = begin; r < end; ++r)
                                   nbits4::quantizeRow(a, r, w, qa);
                           });
    const double cost = 2.0 * static_cast<double>(rows * qa.chunks * 64);
#if ONNXLENS_NBITS_COLUMN_TILES
    if (columnTiles) {
        const std::int64_t tiles = (w.n + nbits4::kTileColumns - 1) / nbits4::kTileColumns;
        ctx.pool().parallelFor(
            tiles, cost * nbits4::kTileColumns, [&](std::int64_t begin, std::int64_t end) {
                nbits4::ColumnTile tile;
                for (std::int64_t t = begin; t < end; ++t)
                    nbits4::columnTileProduct(qa, w, t * nbits4::kTileColumns, tile, y);
            });
        return;
    }
#endif
    auto columns = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r0 = 0; r0 < rows; r0 += 4) {
            const int group = static_cast<int>(std::min<std::int64_t>(4, rows - r0));
            for (std::int64_t c = begin; c < end; ++c) {
                float out[4];
                nbits4::column(qa, r0, group, w, c, out);
                for (int r = 0; r < group; ++r) y[(r0 + r) * w.n + c] = out[r];
            }
        }
    };
    if (rows <= kStreamingRows) {
        ctx.pool().parallelFor(w.n, cost, columns);
        return;
    }
    const std::int64_t tiles = (w.n + kIntTileColumns - 1) / kIntTileColumns;
    ctx.pool().parallelFor(
        tiles, cost * kIntTileColumns, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t t = begin; t < end; ++t)
                columns(t * kIntTileColumns, std::min(w.n, (t + 1) * kIntTileColumns));
        });
}

// The values of a float or float16 tensor as floats (no copy for float).
struct FloatValues {
    Tensor converted;
    const float* data = nullptr;
    explicit FloatValues(const Tensor& t) {
        if (t.dtype() == DataType::Float) {
            data = t.data<float>();
        } else {
            converted = t.castTo(DataType::Float);
            data = converted.data<float>();
        }
    }
};

class MatMulNBitsKernel : public Kernel {
  public:
    explicit MatMulNBitsKernel(const NodeInfo& node)
        : g_(geometryOf(node)), accuracyLevel_(node.getInt("accuracy_level", 0)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 1);
        const Tensor& scales = inputTensor(inputs, 2);
        const Tensor* zeroPoints = optionalInputTensor(inputs, 3);
        const Tensor* groupIndex = optionalInputTensor(inputs, 4);
        const Tensor* bias = optionalInputTensor(inputs, 5);
        const std::string k = std::to_string(g_.k), n = std::to_string(g_.n);
        require(a.dtype() == DataType::Float || a.dtype() == DataType::Float16, [&] {
            return std::string("MatMulNBits: input A must be float or float16, got ") +
                   dataTypeName(a.dtype());
        });
        require(a.rank() >= 1 && a.dim(a.rank() - 1) == g_.k, [&] {
            return "MatMulNBits: input A " + shapeToString(a.shape()) +
                   " must end in attribute K = " + k;
        });
        const Shape packedShape{g_.n, g_.kBlocks, g_.blobSize};
        require(b.dtype() == DataType::UInt8 && b.shape() == packedShape, [&] {
            return "MatMulNBits: input B must be uint8 " + shapeToString(packedShape) +
                   " for attributes K = " + k + ", N = " + n + ", bits, block_size; got " +
                   dataTypeName(b.dtype()) + " " + shapeToString(b.shape());
        });
        require(scales.dtype() == a.dtype() && hasFlatOrMatrixShape(scales, g_.n, g_.kBlocks), [&] {
            return "MatMulNBits: input scales must be " + std::string(dataTypeName(a.dtype())) +
                   " [" + n + ", " + std::to_string(g_.kBlocks) + "], got " +
                   dataTypeName(scales.dtype()) + " " + shapeToString(scales.shape());
        });
        NBitsParams params;
        params.g = &g_;
        params.defaultZero = static_cast<float>(1 << (g_.bits - 1));
        FloatValues scaleValues(scales);
        params.scales = scaleValues.data;
        std::optional<FloatValues> zeroValues;
        if (zeroPoints) {
            if (zeroPoints->dtype() == DataType::UInt8) {
                require(hasFlatOrMatrixShape(*zeroPoints, g_.n, g_.zeroPointBlob), [&] {
                    return "MatMulNBits: packed uint8 input zero_points must be [" + n + ", " +
                           std::to_string(g_.zeroPointBlob) + "], got " +
                           shapeToString(zeroPoints->shape());
                });
                params.packedZero = zeroPoints->data<std::uint8_t>();
            } else {
                require(zeroPoints->dtype() == a.dtype() &&
                            hasFlatOrMatrixShape(*zeroPoints, g_.n, g_.kBlocks),
                        [&] {
                            return "MatMulNBits: input zero_points must be packed uint8 or " +
                                   std::string(dataTypeName(a.dtype())) + " [" + n + ", " +
                                   std::to_string(g_.kBlocks) + "], got " +
                                   dataTypeName(zeroPoints->dtype()) + " " +
                                   shapeToString(zeroPoints->shape());
                        });
                zeroValues.emplace(*zeroPoints);
                params.floatZero = zeroValues->data;
            }
        }
        if (groupIndex) {
            require(g_.bits == 4, "MatMulNBits: input g_idx needs bits = 4 (as ONNX Runtime)");
            require(
                groupIndex->dtype() == DataType::Int32 && groupIndex->rank() == 1 &&
                    (groupIndex->dim(0) == g_.k || groupIndex->dim(0) == g_.kBlocks * g_.blockSize),
                [&] {
                    return "MatMulNBits: input g_idx must be int32 [" + k + "], got " +
                           shapeToString(groupIndex->shape());
                });
            const std::int32_t* gi = groupIndex->data<std::int32_t>();
            for (std::int64_t i = 0; i < g_.k; ++i)
                require(gi[i] >= 0 && gi[i] < g_.kBlocks, [&] {
                    return "MatMulNBits: input g_idx value " + std::to_string(gi[i]) +
                           " at index " + std::to_string(i) + " is outside [0, " +
                           std::to_string(g_.kBlocks) + ")";
                });
            params.groupIndex = gi;
        }
        if (bias)
            require(bias->dtype() == a.dtype() && bias->shape() == Shape{g_.n}, [&] {
                return "MatMulNBits: input bias must be " + std::string(dataTypeName(a.dtype())) +
                       " [" + n + "], got " + dataTypeName(bias->dtype()) + " " +
                       shapeToString(bias->shape());
            });

        Shape outShape = a.shape();
        outShape.back() = g_.n;
        const std::int64_t rows = a.numel() / g_.k;
        Tensor y(DataType::Float, outShape);
        if (rows > 0) {
            FloatValues aValues(a);
            const float* aData = aValues.data;
            const auto* packed = b.data<std::uint8_t>();
            if (usesIntegerProducts(params) && nbits4::allFinite(aData, a.numel())) {
                int8Product(ctx, int4Weights(params, packed), aData, rows, y.data<float>());
            } else {
                std::vector<float> aCopy;
                if (accuracyLevel_ == 4) {
                    aCopy.assign(aData, aData + a.numel());
                    quantizeRowsToInt8Grid(aCopy, rows, g_.k, g_.blockSize);
                    aData = aCopy.data();
                }
                if (rows <= kStreamingRows && !params.groupIndex)
                    streamingProduct(ctx, params, packed, aData, rows, y.data<float>());
                else
                    tiledProduct(ctx, params, packed, aData, rows, y.data<float>());
            }
            if (bias) {
                FloatValues biasValues(*bias);
                float* out = y.data<float>();
                for (std::int64_t r = 0; r < rows; ++r)
                    for (std::int64_t c = 0; c < g_.n; ++c) out[r * g_.n + c] += biasValues.data[c];
            }
        }
        outputs[0] = Value(a.dtype() == DataType::Float ? std::move(y) : y.castTo(a.dtype()));
    }

  private:
    // accuracy_level 4 with 4-bit weights and no g_idx: the integer kernels (A rounded the same
    // way as quantizeRowsToInt8Grid, so only the float summation order differs).
    bool usesIntegerProducts(const NBitsParams& params) const {
        return accuracyLevel_ == 4 && g_.bits == 4 && !params.groupIndex &&
               g_.blockSize <= nbits4::kMaxIntBlockSize;
    }
    nbits4::Int4Weights int4Weights(const NBitsParams& params, const std::uint8_t* packed) const {
        nbits4::Int4Weights w;
        w.k = g_.k;
        w.n = g_.n;
        w.blockSize = g_.blockSize;
        w.kBlocks = g_.kBlocks;
        w.blob = g_.blobSize;
        w.zeroPointBlob = g_.zeroPointBlob;
        w.packed = packed;
        w.scales = params.scales;
        w.packedZero = params.packedZero;
        w.floatZero = params.floatZero;
        return w;
    }

    NBitsGeometry g_;
    std::int64_t accuracyLevel_;
};

}  // namespace

void registerMsMatMulNBitsOps(KernelRegistry& registry) {
    registry.add<MatMulNBitsKernel>("MatMulNBits", 1, kLatestOpset, "com.microsoft");
}

}  // namespace onnxlens::engine::ops
