// com.microsoft MatMulNBits, GatherBlockQuantized, MatMulIntegerToFloat, DynamicQuantizeMatMul and
// QGemm against double-precision references computed here; the 2/4/8-bit weights are packed by
// hand (low bits first) as ONNX Runtime's MatMulNBitsQuantizer writes them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../../../engine/ops/MsMatMulNBitsInt8.h"
#include "MsOpTestHelpers.h"
#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

using engine::shapeElementCount;
using engine::shapeToString;

const std::string kMs = "com.microsoft";

OneNodeSpec msNode(const std::string& op, std::vector<Value> inputs,
                   std::function<void(onnx::NodeProto&)> attrs = {}) {
    OneNodeSpec spec = nodeSpec(op, 1, std::move(inputs), 1, kMs);
    spec.attributes = std::move(attrs);
    return spec;
}

using ms::errorMentions;

// ---- MatMulNBits -------------------------------------------------------------------------------

struct NBitsCase {
    Shape aShape;  // [..., K]
    std::int64_t n = 8;
    int bits = 4;
    std::int64_t blockSize = 32;
    bool zeroPoints = false;
    bool bias = false;
    int accuracyLevel = 0;
    unsigned seed = 1;
};

struct NBitsData {
    std::int64_t k = 0, kBlocks = 0;
    std::vector<float> a, scales, bias;
    std::vector<int> q, zero;  // q [N, K], zero [N, k_blocks]
    Tensor aT, bT, scalesT, zeroT, biasT;
};

NBitsData makeNBits(const NBitsCase& c) {
    NBitsData d;
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), positive(0.01f, 0.1f);
    d.k = c.aShape.back();
    d.kBlocks = (d.k + c.blockSize - 1) / c.blockSize;
    const int levels = 1 << c.bits;
    std::uniform_int_distribution<int> code(0, levels - 1);
    const std::int64_t blob = c.blockSize * c.bits / 8;
    d.a.resize(static_cast<std::size_t>(shapeElementCount(c.aShape)));
    for (float& v : d.a) v = unit(rng);
    d.q.resize(static_cast<std::size_t>(c.n * d.k));
    for (int& v : d.q) v = code(rng);
    d.scales.resize(static_cast<std::size_t>(c.n * d.kBlocks));
    for (float& v : d.scales) v = positive(rng);
    d.zero.assign(static_cast<std::size_t>(c.n * d.kBlocks), levels / 2);
    if (c.zeroPoints)
        for (int& v : d.zero) v = code(rng);
    // B [N, k_blocks, blob]: value i of a block in byte i / (8 / bits), low bits first. The
    // padding past K holds random codes: they must not count.
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(c.n * d.kBlocks * blob), 0);
    const int perByte = 8 / c.bits;
    for (std::int64_t col = 0; col < c.n; ++col)
        for (std::int64_t kk = 0; kk < d.kBlocks * c.blockSize; ++kk) {
            const int value = kk < d.k ? d.q[static_cast<std::size_t>(col * d.k + kk)] : code(rng);
            const std::int64_t block = kk / c.blockSize, i = kk % c.blockSize;
            auto& byte =
                packed[static_cast<std::size_t>((col * d.kBlocks + block) * blob + i / perByte)];
            byte = static_cast<std::uint8_t>(byte | (value << ((i % perByte) * c.bits)));
        }
    d.aT = floats(c.aShape, d.a);
    d.bT = makeTensor<std::uint8_t>({c.n, d.kBlocks, blob}, packed);
    d.scalesT = floats({c.n, d.kBlocks}, d.scales);
    if (c.zeroPoints) {
        // [N, ceil(k_blocks * bits / 8)], block b at bit b * bits of its row.
        const std::int64_t zpBlob = (d.kBlocks * c.bits + 7) / 8;
        std::vector<std::uint8_t> zp(static_cast<std::size_t>(c.n * zpBlob), 0);
        for (std::int64_t col = 0; col < c.n; ++col)
            for (std::int64_t b = 0; b < d.kBlocks; ++b) {
                const std::int64_t bit = b * c.bits;
                auto& byte = zp[static_cast<std::size_t>(col * zpBlob + bit / 8)];
                byte = static_cast<std::uint8_t>(
                    byte | (d.zero[static_cast<std::size_t>(col * d.kBlocks + b)] << (bit % 8)));
            }
        d.zeroT = makeTensor<std::uint8_t>({c.n, zpBlob}, zp);
    }
    if (c.bias) {
        d.bias.resize(static_cast<std::size_t>(c.n));
        for (float& v : d.bias) v = unit(rng);
        d.biasT = floats({c.n}, d.bias);
    }
    return d;
}

// A's rows as accuracy_level 4 sees them: int8 per block, s = max|a| / 127.
std::vector<double> int8Grid(const std::vector<float>& a, std::int64_t k, std::int64_t blockSize) {
    std::vector<double> out(a.begin(), a.end());
    for (std::size_t r = 0; r < a.size() / static_cast<std::size_t>(k); ++r)
        for (std::int64_t base = 0; base < k; base += blockSize) {
            const std::int64_t len = std::min(blockSize, k - base);
            double amax = 0;
            for (std::int64_t i = 0; i < len; ++i)
                amax = std::max(amax, std::fabs(out[r * k + base + i]));
            if (amax == 0) continue;
            // The integer is rounded from the float product a * (127 / max|a|), as the kernels
            // (and ONNX Runtime's) compute it: in double a value within an ulp of a half could
            // round the other way.
            const float inverse = 127.0f / static_cast<float>(amax);
            for (std::int64_t i = 0; i < len; ++i) {
                double& v = out[r * k + base + i];
                v = std::nearbyint(static_cast<float>(v) * inverse) * amax / 127.0;
            }
        }
    return out;
}

// Y = A x dequantize(B)^T + bias in double, A optionally on the int8 grid.
Tensor nbitsReference(const NBitsCase& c, const NBitsData& d, bool int8A) {
    const std::vector<double> a =
        int8A ? int8Grid(d.a, d.k, c.blockSize) : std::vector<double>(d.a.begin(), d.a.end());
    const std::int64_t rows = static_cast<std::int64_t>(d.a.size()) / d.k;
    Shape outShape = c.aShape;
    outShape.back() = c.n;
    std::vector<float> y(static_cast<std::size_t>(rows * c.n));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t col = 0; col < c.n; ++col) {
            double acc = c.bias ? d.bias[static_cast<std::size_t>(col)] : 0.0;
            for (std::int64_t kk = 0; kk < d.k; ++kk) {
                const auto p = static_cast<std::size_t>(col * d.kBlocks + kk / c.blockSize);
                const double w = (d.q[static_cast<std::size_t>(col * d.k + kk)] - d.zero[p]) *
                                 static_cast<double>(d.scales[p]);
                acc += a[static_cast<std::size_t>(r * d.k + kk)] * w;
            }
            y[static_cast<std::size_t>(r * c.n + col)] = static_cast<float>(acc);
        }
    return floats(outShape, y);
}

OneNodeSpec nbitsSpec(const NBitsCase& c, const NBitsData& d) {
    return msNode("MatMulNBits",
                  {d.aT, d.bT, d.scalesT, c.zeroPoints ? Value(d.zeroT) : Value(), Value(),
                   c.bias ? Value(d.biasT) : Value()},
                  [c, k = d.k](onnx::NodeProto& node) {
                      setAttr(node, "K", k);
                      setAttr(node, "N", c.n);
                      setAttr(node, "bits", std::int64_t{c.bits});
                      setAttr(node, "block_size", c.blockSize);
                      setAttr(node, "accuracy_level", std::int64_t{c.accuracyLevel});
                  });
}

void expectNBitsMatches(const NBitsCase& c) {
    SCOPED_TRACE("bits " + std::to_string(c.bits) + " block " + std::to_string(c.blockSize) +
                 " A " + shapeToString(c.aShape) + " zp " + std::to_string(c.zeroPoints) +
                 " level " + std::to_string(c.accuracyLevel));
    NBitsData d = makeNBits(c);
    Tensor y = runOneNodeTensor(nbitsSpec(c, d));
    ASSERT_TRUE(y.defined());
    EXPECT_TRUE(tensorsClose(y, nbitsReference(c, d, c.accuracyLevel == 4), {1e-4, 1e-4}));
}

TEST(MsMatMulNBits, AllBitWidthsAndBlockSizesMatchTheReference) {
    for (int bits : {2, 4, 8})
        for (std::int64_t block : {16, 32, 64, 128, 256})
            for (bool zp : {false, true}) {
                NBitsCase c;
                c.aShape = {1, 256};
                c.n = 5;
                c.bits = bits;
                c.blockSize = block;
                c.zeroPoints = zp;
                c.seed = static_cast<unsigned>(bits * 1000 + block + zp);
                expectNBitsMatches(c);
            }
}

TEST(MsMatMulNBits, KNotAMultipleOfTheBlockAndBias) {
    for (int bits : {2, 4, 8})
        for (std::int64_t k : {17, 40, 100}) {
            NBitsCase c;
            c.aShape = {2, k};
            c.n = 3;
            c.bits = bits;
            c.blockSize = 32;
            c.zeroPoints = k != 40;
            c.bias = true;
            c.seed = static_cast<unsigned>(k + bits);
            expectNBitsMatches(c);
        }
}

TEST(MsMatMulNBits, ManyRowsAndThreeDimensionalA) {
    // 3 rows and 5 rows take the streaming kernel in groups of up to four; 2 x 9 rows the tiled
    // GEMM; N = 150 spans two tiles of 128 columns.
    for (Shape shape : {Shape{3, 64}, Shape{5, 64}, Shape{2, 9, 64}, Shape{1, 1, 64}}) {
        NBitsCase c;
        c.aShape = shape;
        c.n = 150;
        c.blockSize = 16;
        c.zeroPoints = true;
        c.bias = true;
        expectNBitsMatches(c);
    }
}

TEST(MsMatMulNBits, AccuracyLevelFourQuantizesAPerBlock) {
    for (Shape shape : {Shape{1, 96}, Shape{12, 96}})
        for (bool zp : {false, true}) {
            NBitsCase c;
            c.aShape = shape;
            c.n = 6;
            c.blockSize = 32;
            c.zeroPoints = zp;
            c.accuracyLevel = 4;
            c.seed = 7;
            expectNBitsMatches(c);
            // Against the unquantized product the error stays within int8's half step per value:
            // sum over k of (max|a| of the block / 254) * |w|.
            NBitsData d = makeNBits(c);
            Tensor y = runOneNodeTensor(nbitsSpec(c, d));
            Tensor exact = nbitsReference(c, d, false);
            const std::int64_t rows = static_cast<std::int64_t>(d.a.size()) / d.k;
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t col = 0; col < c.n; ++col) {
                    double bound = 1e-5;
                    for (std::int64_t kk = 0; kk < d.k; ++kk) {
                        const std::int64_t base = kk / c.blockSize * c.blockSize;
                        double amax = 0;
                        for (std::int64_t i = base; i < std::min(base + c.blockSize, d.k); ++i)
                            amax = std::max(amax, std::fabs(double(d.a[r * d.k + i])));
                        const auto p = static_cast<std::size_t>(col * d.kBlocks + kk / c.blockSize);
                        bound += amax / 254.0 *
                                 std::fabs((d.q[col * d.k + kk] - d.zero[p]) * double(d.scales[p]));
                    }
                    const std::int64_t i = r * c.n + col;
                    EXPECT_LE(std::fabs(y.data<float>()[i] - exact.data<float>()[i]), bound);
                }
        }
}

// accuracy_level 4 with 4 bits takes the integer kernels (MsMatMulNBitsInt8.h): the layouts of
// blobs of 8, 16, 32, 64 and 128 bytes, the last chunk of a column zero-padded (K not a multiple of
// the block), the zero points' eight-block loop and its tail (13 and 63 blocks), N not a
// multiple of the vector width, rows 1 and 3 (and 9: the many-rows tiling).
TEST(MsMatMulNBits, IntegerPathMatchesTheInt8Reference) {
    for (std::int64_t block : {16, 32, 64, 128, 256})
        for (std::int64_t k : {std::int64_t{256}, std::int64_t{200}, block * 63 - 5})
            for (bool zp : {false, true})
                for (std::int64_t rows : {1, 3, 9}) {
                    if (k > 2048 && rows == 9) continue;
                    NBitsCase c;
                    c.aShape = {rows, k};
                    c.n = 13;
                    c.blockSize = block;
                    c.zeroPoints = zp;
                    c.bias = zp;
                    c.accuracyLevel = 4;
                    c.seed = static_cast<unsigned>(block + k + zp + 100 * rows);
                    expectNBitsMatches(c);
                }
}

// Zero points of A's type and float16 A and scales at level 4 take the integer kernels too (the
// zero point comes off in float either way).
TEST(MsMatMulNBits, IntegerPathTakesFloatZeroPointsAndFloat16) {
    NBitsCase c;
    c.aShape = {2, 80};
    c.n = 5;
    c.blockSize = 16;
    c.zeroPoints = true;
    c.accuracyLevel = 4;
    NBitsData d = makeNBits(c);
    std::vector<float> zf(d.zero.begin(), d.zero.end());
    for (std::size_t i = 0; i < zf.size(); ++i) zf[i] += 0.25f * static_cast<float>(i % 3);
    OneNodeSpec spec = nbitsSpec(c, d);
    spec.inputs[3] = Value(floats({c.n, d.kBlocks}, zf));
    // The reference with the fractional zero points: (q - z) * s = (q - zi) * s - f * s.
    Tensor reference = nbitsReference(c, d, true);
    const std::vector<double> grid = int8Grid(d.a, d.k, c.blockSize);
    for (std::int64_t r = 0; r < 2; ++r)
        for (std::int64_t col = 0; col < c.n; ++col) {
            double shift = 0;
            for (std::int64_t kk = 0; kk < d.k; ++kk) {
                const auto p = static_cast<std::size_t>(col * d.kBlocks + kk / c.blockSize);
                shift += grid[static_cast<std::size_t>(r * d.k + kk)] * (zf[p] - d.zero[p]) *
                         static_cast<double>(d.scales[p]);
            }
            reference.data<float>()[r * c.n + col] -= static_cast<float>(shift);
        }
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), reference, {1e-4, 1e-4}));
    // float16 A and scales: A and the scales as float16 holds them, the output rounded to it.
    NBitsData half = d;
    const Tensor aHalf = d.aT.castTo(DataType::Float16);
    const Tensor scalesHalf = d.scalesT.castTo(DataType::Float16);
    const Tensor aBack = aHalf.castTo(DataType::Float),
                 scalesBack = scalesHalf.castTo(DataType::Float);
    half.a.assign(aBack.data<float>(), aBack.data<float>() + aBack.numel());
    half.scales.assign(scalesBack.data<float>(), scalesBack.data<float>() + scalesBack.numel());
    spec = nbitsSpec(c, d);
    spec.inputs[0] = Value(aHalf);
    spec.inputs[2] = Value(scalesHalf);
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::Float16);
    EXPECT_TRUE(
        tensorsClose(y.castTo(DataType::Float), nbitsReference(c, half, true), {1e-2, 1e-2}));
}

// A NaN or an infinity in A at level 4 propagates as in float (its row's outputs are NaN), the
// other rows are the integer kernels' products; a block whose max|a| is so small that 127 /
// max|a| overflows stays in int8 (no undefined conversion).
TEST(MsMatMulNBits, IntegerPathNonFiniteAndTinyBlocks) {
    NBitsCase c;
    c.aShape = {3, 64};
    c.n = 4;
    c.accuracyLevel = 4;
    NBitsData d = makeNBits(c);
    const Tensor reference = nbitsReference(c, d, true);
    for (float bad : {std::nanf(""), INFINITY}) {
        NBitsData e = d;
        e.a[5] = bad;
        e.aT = floats(c.aShape, e.a);
        const Tensor y = runOneNodeTensor(nbitsSpec(c, e));
        for (std::int64_t col = 0; col < c.n; ++col) {
            EXPECT_TRUE(std::isnan(y.data<float>()[col]));
            for (std::int64_t r = 1; r < 3; ++r)
                EXPECT_NEAR(y.data<float>()[r * c.n + col], reference.data<float>()[r * c.n + col],
                            1e-4);
        }
    }
    NBitsData tiny = d;
    for (std::int64_t i = 0; i < 32; ++i)
        tiny.a[static_cast<std::size_t>(i)] = i % 2 ? 1e-38f : 0.0f;
    tiny.aT = floats(c.aShape, tiny.a);
    const Tensor y = runOneNodeTensor(nbitsSpec(c, tiny));
    for (std::int64_t i = 0; i < y.numel(); ++i) EXPECT_TRUE(std::isfinite(y.data<float>()[i]));
}

namespace {

// The kernels' view of a 4-bit case's packed weights, scales and (when the case has them) packed
// zero points.
engine::ops::nbits4::Int4Weights int4WeightsOf(const NBitsCase& c, const NBitsData& d) {
    engine::ops::nbits4::Int4Weights w;
    w.k = d.k;
    w.n = c.n;
    w.blockSize = c.blockSize;
    w.kBlocks = d.kBlocks;
    w.blob = c.blockSize / 2;
    w.zeroPointBlob = (d.kBlocks + 1) / 2;
    w.packed = d.bT.data<std::uint8_t>();
    w.scales = d.scales.data();
    w.packedZero = c.zeroPoints ? d.zeroT.data<std::uint8_t>() : nullptr;
    return w;
}

}  // namespace

// The integer kernels called directly: the scalar loop (the build without AVX2) and the one this
// build uses give the level-4 reference for every row group and column; K of 3 blocks and a
// tail, and of 9 blocks and a tail (block 32: the four-chunk loop, then a chunk, then the tail).
TEST(MsMatMulNBits, IntegerKernelsScalarAndVectorAgree) {
    for (std::int64_t block : {16, 32, 64, 128})
        for (std::int64_t blocks : {3, 9})
            for (bool zp : {false, true}) {
                NBitsCase c;
                c.aShape = {5, blocks * block + 7};
                c.n = 9;
                c.blockSize = block;
                c.zeroPoints = zp;
                c.accuracyLevel = 4;
                c.seed = static_cast<unsigned>(block * blocks + zp);
                NBitsData d = makeNBits(c);
                const Tensor reference = nbitsReference(c, d, true);
                const auto w = int4WeightsOf(c, d);
                const auto qa = engine::ops::nbits4::quantizeRows(d.a.data(), 5, w);
                for (std::int64_t col = 0; col < c.n; ++col)
                    for (std::int64_t r0 : {0, 1, 4}) {
                        const int count = static_cast<int>(std::min<std::int64_t>(4, 5 - r0));
                        float scalar[4], vector[4];
                        engine::ops::nbits4::columnScalar(qa, r0, count, w, col, scalar);
                        engine::ops::nbits4::column(qa, r0, count, w, col, vector);
                        for (int i = 0; i < count; ++i) {
                            const float e = reference.data<float>()[(r0 + i) * c.n + col];
                            EXPECT_NEAR(scalar[i], e, 1e-4 + 1e-4 * std::fabs(e));
                            EXPECT_NEAR(vector[i], e, 1e-4 + 1e-4 * std::fabs(e));
                        }
                    }
            }
}

// The many-rows kernel with columns in the vector lanes (AVX-512 VNNI builds): 16-column tiles
// unpacked and transposed, pieces of 16 bytes that cross block boundaries (blocks of 16) or end a
// column part-way (K not a multiple of the block), the last tile of 5 columns, and rows in
// groups of eight with a tail of five, against the int8 reference.
TEST(MsMatMulNBits, ColumnTilesMatchTheReference) {
#if ONNXLENS_NBITS_COLUMN_TILES
    for (std::int64_t block : {16, 32, 64, 128})
        for (std::int64_t blocks : {3, 9})
            for (bool zp : {false, true}) {
                SCOPED_TRACE("block " + std::to_string(block) + " x " + std::to_string(blocks) +
                             (zp ? ", zero points" : ""));
                NBitsCase c;
                c.aShape = {13, blocks * block - 7};
                c.n = 37;
                c.blockSize = block;
                c.zeroPoints = zp;
                c.accuracyLevel = 4;
                c.seed = static_cast<unsigned>(7 * block + blocks + zp);
                NBitsData d = makeNBits(c);
                const Tensor reference = nbitsReference(c, d, true);
                const auto w = int4WeightsOf(c, d);
                auto rows = engine::ops::nbits4::quantizedRowsFor(13, w, true);
                for (std::int64_t r = 0; r < 13; ++r)
                    engine::ops::nbits4::quantizeRow(d.a.data(), r, w, rows);
                std::vector<float> y(static_cast<std::size_t>(13 * c.n), -1.0f);
                engine::ops::nbits4::ColumnTile tile;
                for (std::int64_t col0 = 0; col0 < c.n; col0 += engine::ops::nbits4::kTileColumns)
                    engine::ops::nbits4::columnTileProduct(rows, w, col0, tile, y.data());
                for (std::size_t i = 0; i < y.size(); ++i) {
                    const float e = reference.data<float>()[i];
                    ASSERT_NEAR(y[i], e, 1e-4 + 1e-4 * std::fabs(e)) << "element " << i;
                }
            }
#else
    GTEST_SKIP() << "this build's kernels have no AVX-512 VNNI";
#endif
}

// Blocks at the int8 extremes: A all -1 (q_a = -127 throughout), weights at 15 and 0 with zero
// point 8 (q - zero_point = 7 and -8), where a naive u8 x s8 product of (q - zero_point) would
// saturate; an all-zero A block (scale 0); the product is exact up to float rounding.
TEST(MsMatMulNBits, IntegerPathExtremesAndZeroBlocks) {
    NBitsCase c;
    c.aShape = {2, 128};
    c.n = 3;
    c.blockSize = 32;
    c.accuracyLevel = 4;
    NBitsData d = makeNBits(c);
    for (std::int64_t i = 0; i < 128; ++i) {
        d.a[static_cast<std::size_t>(i)] = i < 64 ? -1.0f : (i < 96 ? 0.0f : 0.5f);
        d.a[static_cast<std::size_t>(128 + i)] = i % 2 ? 1.0f : -1.0f;
    }
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(c.n * 4 * 16));
    for (std::int64_t col = 0; col < c.n; ++col)
        for (std::int64_t kk = 0; kk < 128; ++kk) {
            const int q = col == 0 ? 15 : (col == 1 ? 0 : (kk % 2 ? 15 : 0));
            d.q[static_cast<std::size_t>(col * 128 + kk)] = q;
            auto& byte = packed[static_cast<std::size_t>(col * 64 + kk / 2)];
            byte = static_cast<std::uint8_t>(byte | (q << (kk % 2 * 4)));
        }
    for (float& s : d.scales) s = 1.0f;
    d.aT = floats(c.aShape, d.a);
    d.bT = makeTensor<std::uint8_t>({c.n, 4, 16}, packed);
    d.scalesT = floats({c.n, 4}, d.scales);
    const Tensor y = runOneNodeTensor(nbitsSpec(c, d));
    // w = 7 (column 0), -8 (column 1), -8 on even k and 7 on odd k (column 2). Row 0: 64 x -1,
    // 32 x 0, 32 x 0.5; row 1: -1 on even k, 1 on odd k.
    const std::vector<float> want = {-64 * 7 + 32 * 0.5f * 7,
                                     -64 * -8 + 32 * 0.5f * -8,
                                     32 * 8 - 32 * 7 + 16 * 0.5f * -8 + 16 * 0.5f * 7,
                                     0,
                                     0,
                                     64 * 8 + 64 * 7};
    EXPECT_TRUE(tensorsClose(y, floats({2, 3}, want), {1e-4, 1e-5}));
    EXPECT_TRUE(tensorsClose(y, nbitsReference(c, d, true), {1e-4, 1e-5}));
}

// The integer kernels split N over the threads (and tiles of columns for many rows): each
// column is computed whole by one thread, so 1 and 2 threads give the same bits.
TEST(MsMatMulNBits, IntegerPathIsTheSameAtOneAndTwoThreads) {
    for (std::int64_t rows : {1, 3, 12}) {
        NBitsCase c;
        c.aShape = {rows, 512};
        c.n = 301;
        c.blockSize = 32;
        c.zeroPoints = true;
        c.accuracyLevel = 4;
        NBitsData d = makeNBits(c);
        const auto one = runOneNode(nbitsSpec(c, d), 1);
        const auto two = runOneNode(nbitsSpec(c, d), 2);
        ASSERT_TRUE(one && two);
        const Tensor& a = (*one)[0].tensor();
        const Tensor& b = (*two)[0].tensor();
        ASSERT_EQ(a.shape(), b.shape());
        EXPECT_EQ(std::memcmp(a.data<float>(), b.data<float>(),
                              static_cast<std::size_t>(a.numel()) * sizeof(float)),
                  0);
        EXPECT_TRUE(tensorsClose(a, nbitsReference(c, d, true), {1e-4, 1e-4}));
    }
}

TEST(MsMatMulNBits, FloatZeroPointsAndFloat16) {
    NBitsCase c;
    c.aShape = {2, 48};
    c.n = 4;
    c.blockSize = 16;
    c.zeroPoints = true;
    NBitsData d = makeNBits(c);
    // Unpacked zero points of A's type give the same product as the packed ones.
    std::vector<float> zf(d.zero.begin(), d.zero.end());
    OneNodeSpec spec = nbitsSpec(c, d);
    spec.inputs[3] = Value(floats({c.n, d.kBlocks}, zf));
    Tensor reference = nbitsReference(c, d, false);
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), reference, {1e-4, 1e-4}));
    // float16 A and scales: computed in float, rounded to float16.
    spec = nbitsSpec(c, d);
    spec.inputs[0] = Value(d.aT.castTo(DataType::Float16));
    spec.inputs[2] = Value(d.scalesT.castTo(DataType::Float16));
    Tensor half = runOneNodeTensor(spec);
    ASSERT_EQ(half.dtype(), DataType::Float16);
    EXPECT_TRUE(tensorsClose(half.castTo(DataType::Float), reference, {2e-2, 2e-2}));
}

TEST(MsMatMulNBits, GroupIndexPicksEachRowsBlock) {
    // g_idx maps row k of B to the parameters of block g_idx[k]: here the blocks swapped.
    NBitsCase c;
    c.aShape = {1, 32};
    c.n = 2;
    c.blockSize = 16;
    c.zeroPoints = true;
    NBitsData d = makeNBits(c);
    std::vector<std::int32_t> gidx(32);
    for (int k = 0; k < 32; ++k) gidx[static_cast<std::size_t>(k)] = k < 16 ? 1 : 0;
    OneNodeSpec spec = nbitsSpec(c, d);
    spec.inputs[4] = Value(makeTensor<std::int32_t>({32}, gidx));
    NBitsData swapped = d;
    for (std::int64_t col = 0; col < c.n; ++col) {
        std::swap(swapped.scales[col * 2], swapped.scales[col * 2 + 1]);
        std::swap(swapped.zero[col * 2], swapped.zero[col * 2 + 1]);
    }
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), nbitsReference(c, swapped, false), {1e-4, 1e-4}));
    spec.inputs[4] = Value(makeTensor<std::int32_t>({32}, std::vector<std::int32_t>(32, 2)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "g_idx", "outside"}));
}

TEST(MsMatMulNBits, HostileAttributesAndInputsAreErrors) {
    NBitsCase c;
    c.aShape = {1, 32};
    c.n = 4;
    c.zeroPoints = true;
    NBitsData d = makeNBits(c);
    auto withAttr = [&](const char* name, std::int64_t value) {
        OneNodeSpec spec = nbitsSpec(c, d);
        spec.attributes = [=, k = d.k](onnx::NodeProto& node) {
            auto set = [&](const char* n, std::int64_t v) {
                setAttr(node, n, std::string(n) == name ? value : v);
            };
            set("K", k);
            set("N", c.n);
            set("bits", c.bits);
            set("block_size", c.blockSize);
        };
        return runOneNode(spec);
    };
    EXPECT_TRUE(errorMentions(withAttr("block_size", 0), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(withAttr("block_size", 48), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(withAttr("block_size", 8), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(withAttr("block_size", -32), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(withAttr("bits", 3), {"under_test", "bits"}));
    EXPECT_TRUE(errorMentions(withAttr("bits", 16), {"under_test", "bits"}));
    EXPECT_TRUE(errorMentions(withAttr("K", 0), {"under_test", "attribute K"}));
    EXPECT_TRUE(errorMentions(withAttr("N", 0), {"under_test", "attribute N"}));
    EXPECT_TRUE(errorMentions(withAttr("N", -5), {"under_test", "attribute N"}));
    EXPECT_TRUE(errorMentions(withAttr("K", std::int64_t{1} << 62), {"under_test", "attribute K"}));
    EXPECT_TRUE(errorMentions(withAttr("N", std::int64_t{1} << 40), {"under_test", "input B"}));
    EXPECT_TRUE(errorMentions(withAttr("K", 64), {"under_test", "input A"}));
    EXPECT_TRUE(errorMentions(withAttr("N", 5), {"under_test", "input B"}));

    OneNodeSpec spec = nbitsSpec(c, d);
    spec.inputs[2] = Value(floats({c.n, 2}, std::vector<float>(8, 1.0f)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "scales"}));
    spec = nbitsSpec(c, d);
    spec.inputs[3] = Value(makeTensor<std::uint8_t>({c.n, 2}, std::vector<std::uint8_t>(8, 0)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "zero_points"}));
    spec = nbitsSpec(c, d);
    spec.inputs[3] = Value(makeTensor<std::int32_t>({c.n, 1}, std::vector<std::int32_t>(4, 0)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "zero_points"}));
    spec = nbitsSpec(c, d);
    spec.inputs[5] = Value(floats({3}, {1, 2, 3}));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "bias"}));
    spec = nbitsSpec(c, d);
    spec.inputs[0] = Value(makeTensor<double>({1, 32}, std::vector<double>(32, 1.0)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "input A"}));
    spec = nbitsSpec(c, d);
    spec.inputs[1] = Value(makeTensor<std::uint8_t>({4, 16}, std::vector<std::uint8_t>(64, 0)));
    EXPECT_TRUE(errorMentions(runOneNode(spec), {"under_test", "input B"}));
}

TEST(MsMatMulNBits, EmptyRowsGiveAnEmptyOutput) {
    NBitsCase c;
    c.aShape = {0, 32};
    c.n = 3;
    NBitsData d = makeNBits(c);
    Tensor y = runOneNodeTensor(nbitsSpec(c, d));
    EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

// ---- GatherBlockQuantized ----------------------------------------------------------------------

TEST(MsGatherBlockQuantized, Int4TableWithNegativeIndices) {
    // data int4 [3, 32], quantize_axis 1, block 16: scales [3, 2], zero points int4 [3, 2].
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> code(-8, 7);
    std::vector<std::uint8_t> table(96), zp(6);
    std::vector<int> values(96), zeros(6);
    for (std::size_t i = 0; i < 96; ++i) {
        values[i] = code(rng);
        table[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(values[i]));
    }
    for (std::size_t i = 0; i < 6; ++i) {
        zeros[i] = code(rng);
        zp[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(zeros[i]));
    }
    Tensor data(DataType::Int4, {3, 32});
    std::memcpy(data.raw(), table.data(), table.size());
    Tensor zeroPoints(DataType::Int4, {3, 2});
    std::memcpy(zeroPoints.raw(), zp.data(), zp.size());
    std::vector<float> scales{0.5f, 0.25f, 1.0f, 2.0f, 0.125f, 4.0f};
    Tensor indices = makeTensor<std::int64_t>({2, 2}, {2, -3, 1, -1});
    auto spec = [&](bool withZero) {
        return msNode(
            "GatherBlockQuantized",
            {data, indices, floats({3, 2}, scales), withZero ? Value(zeroPoints) : Value()},
            [](onnx::NodeProto& node) {
                setAttr(node, "block_size", std::int64_t{16});
                setAttr(node, "quantize_axis", std::int64_t{1});
            });
    };
    for (bool withZero : {true, false}) {
        std::vector<float> expected;
        for (std::int64_t index : {2, -3, 1, -1}) {
            for (int j = 0; j < 32; ++j) {
                const std::size_t row = static_cast<std::size_t>(index < 0 ? index + 3 : index);
                const std::size_t p = row * 2 + static_cast<std::size_t>(j / 16);
                const int z = withZero ? zeros[p] : 0;
                expected.push_back(static_cast<float>(values[row * 32 + j] - z) * scales[p]);
            }
        }
        Tensor y = runOneNodeTensor(spec(withZero));
        EXPECT_TRUE(tensorsClose(y, floats({2, 2, 32}, expected), {0, 0}));
    }
    // An index outside [-3, 3) is an error, as in ONNX Runtime 1.30.
    indices = makeTensor<std::int64_t>({2}, {0, 3});
    EXPECT_TRUE(errorMentions(runOneNode(spec(true)), {"under_test", "indices", "3"}));
    indices = makeTensor<std::int64_t>({1}, {-4});
    EXPECT_TRUE(errorMentions(runOneNode(spec(false)), {"under_test", "indices", "-4"}));
}

TEST(MsGatherBlockQuantized, PackedUint8FourAndTwoBits) {
    // uint8 [2, 8] holding 16 4-bit values per row (or 32 2-bit ones); block 16.
    std::vector<std::uint8_t> bytes(16);
    for (std::size_t i = 0; i < 16; ++i) bytes[i] = static_cast<std::uint8_t>(i * 37 + 11);
    Tensor data = makeTensor<std::uint8_t>({2, 8}, bytes);
    Tensor indices = makeTensor<std::int32_t>({1}, {1});
    for (int bits : {4, 2}) {
        const int perByte = 8 / bits, values = 8 * perByte, blocks = values / 16;
        std::vector<float> scales(static_cast<std::size_t>(2 * blocks));
        for (std::size_t i = 0; i < scales.size(); ++i) scales[i] = 0.5f + static_cast<float>(i);
        // Zero points: [2, ceil(blocks / perByte)] packed the same way.
        std::vector<std::uint8_t> zp(
            static_cast<std::size_t>(2 * ((blocks + perByte - 1) / perByte)));
        std::vector<int> zeros(static_cast<std::size_t>(2 * blocks));
        for (int r = 0; r < 2; ++r)
            for (int b = 0; b < blocks; ++b) {
                const int z = (r * 3 + b * 5 + 1) % (1 << bits);
                zeros[static_cast<std::size_t>(r * blocks + b)] = z;
                const int perRow = (blocks + perByte - 1) / perByte;
                zp[static_cast<std::size_t>(r * perRow + b / perByte)] |=
                    static_cast<std::uint8_t>(z << ((b % perByte) * bits));
            }
        for (bool withZero : {true, false}) {
            std::vector<float> expected;
            for (int j = 0; j < values; ++j) {
                const int q =
                    (bytes[static_cast<std::size_t>(8 + j / perByte)] >> ((j % perByte) * bits)) &
                    ((1 << bits) - 1);
                const std::size_t p = static_cast<std::size_t>(blocks + j / 16);
                const int z = withZero ? zeros[p] : 1 << (bits - 1);
                expected.push_back(static_cast<float>(q - z) * scales[p]);
            }
            OneNodeSpec spec =
                msNode("GatherBlockQuantized",
                       {data, indices, floats({2, blocks}, scales),
                        withZero ? Value(makeTensor<std::uint8_t>(
                                       {2, static_cast<std::int64_t>(zp.size() / 2)}, zp))
                                 : Value()},
                       [bits](onnx::NodeProto& node) {
                           setAttr(node, "block_size", std::int64_t{16});
                           setAttr(node, "bits", std::int64_t{bits});
                       });
            Tensor y = runOneNodeTensor(spec);
            EXPECT_TRUE(tensorsClose(y, floats({1, values}, expected), {0, 0}))
                << "bits " << bits << " zero points " << withZero;
        }
    }
}

TEST(MsGatherBlockQuantized, HostileAttributesAndShapesAreErrors) {
    Tensor data = makeTensor<std::uint8_t>({2, 16}, std::vector<std::uint8_t>(32, 0x21));
    Tensor indices = makeTensor<std::int64_t>({1}, {0});
    Tensor scales = floats({2, 2}, {1, 1, 1, 1});
    auto run = [&](std::int64_t block, std::int64_t bits, std::int64_t gatherAxis, Tensor s) {
        return runOneNode(
            msNode("GatherBlockQuantized", {data, indices, s}, [=](onnx::NodeProto& node) {
                setAttr(node, "block_size", block);
                setAttr(node, "bits", bits);
                setAttr(node, "gather_axis", gatherAxis);
            }));
    };
    EXPECT_TRUE(run(16, 4, 0, scales));
    EXPECT_TRUE(errorMentions(run(0, 4, 0, scales), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(run(24, 4, 0, scales), {"under_test", "block_size"}));
    EXPECT_TRUE(errorMentions(run(16, 3, 0, scales), {"under_test", "bits"}));
    EXPECT_TRUE(errorMentions(run(16, 4, 1, scales), {"under_test", "gather_axis"}));
    EXPECT_TRUE(errorMentions(run(16, 4, 5, scales), {"under_test", "gather_axis"}));
    EXPECT_TRUE(errorMentions(run(16, 4, 0, floats({2, 3}, std::vector<float>(6, 1.0f))),
                              {"under_test", "scales"}));
}

// ---- The 8-bit products ------------------------------------------------------------------------

// (A - za) x (B - zb[n]) in double, A [M, K] and B [K, N] as ints.
std::vector<double> integerReference(const std::vector<int>& a, int za, const std::vector<int>& b,
                                     const std::vector<int>& zb, std::int64_t m, std::int64_t k,
                                     std::int64_t n) {
    std::vector<double> y(static_cast<std::size_t>(m * n), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (std::int64_t p = 0; p < k; ++p)
                acc += double(a[i * k + p] - za) *
                       double(b[p * n + j] - zb[zb.size() == 1 ? 0 : std::size_t(j)]);
            y[static_cast<std::size_t>(i * n + j)] = acc;
        }
    return y;
}

template <class T>
std::vector<T> asType(const std::vector<int>& v) {
    return {v.begin(), v.end()};
}

std::vector<int> randomInts(std::size_t count, int lo, int hi, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int> v(count);
    for (int& x : v) x = d(rng);
    return v;
}

TEST(MsMatMulIntegerToFloat, PerTensorAndPerColumnScalesAndZeroPoints) {
    const std::int64_t m = 3, k = 5, n = 4;
    std::vector<int> a = randomInts(m * k, 0, 255, 1), b = randomInts(k * n, -128, 127, 2);
    for (bool perColumn : {false, true}) {
        std::vector<float> bScale =
            perColumn ? std::vector<float>{0.5f, 0.25f, 2.0f, 1.0f} : std::vector<float>{0.5f};
        std::vector<int> bZero = perColumn ? std::vector<int>{1, -2, 0, 3} : std::vector<int>{-1};
        Shape sShape = perColumn ? Shape{n} : Shape{};
        std::vector<float> bias{0.5f, -1.0f, 2.0f, 0.0f};
        auto spec = msNode(
            "MatMulIntegerToFloat",
            {makeTensor<std::uint8_t>({m, k}, asType<std::uint8_t>(a)),
             makeTensor<std::int8_t>({k, n}, asType<std::int8_t>(b)), Tensor::scalar<float>(0.1f),
             floats(sShape, bScale), Tensor::scalar<std::uint8_t>(7),
             makeTensor<std::int8_t>(sShape, asType<std::int8_t>(bZero)), floats({n}, bias)});
        std::vector<double> acc = integerReference(a, 7, b, bZero, m, k, n);
        std::vector<float> expected(acc.size());
        for (std::size_t i = 0; i < acc.size(); ++i)
            expected[i] = static_cast<float>(acc[i] * 0.1 * bScale[bScale.size() == 1 ? 0 : i % n] +
                                             bias[i % n]);
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floats({m, n}, expected), {1e-5, 1e-4}))
            << "per column " << perColumn;
    }
}

TEST(MsDynamicQuantizeMatMul, QuantizesAPerTensorThenMultipliesExactly) {
    const std::int64_t m = 2, k = 6, n = 3;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> unit(-2.0f, 3.0f);
    std::vector<float> a(static_cast<std::size_t>(m * k));
    for (float& v : a) v = unit(rng);
    // A's parameters as DynamicQuantizeLinear computes them.
    float lo = 0, hi = 0;
    for (float v : a) lo = std::min(lo, v), hi = std::max(hi, v);
    const float aScale = (hi - lo) / 255.0f;
    const int aZero = static_cast<int>(std::nearbyint(std::clamp(-lo / aScale, 0.0f, 255.0f)));
    std::vector<int> aq(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        aq[i] = static_cast<int>(
            std::clamp(std::nearbyint(a[i] / aScale) + float(aZero), 0.0f, 255.0f));
    for (DataType bType : {DataType::Int8, DataType::UInt8})
        for (bool perColumn : {false, true}) {
            std::vector<int> b = bType == DataType::Int8 ? randomInts(k * n, -128, 127, 9)
                                                         : randomInts(k * n, 0, 255, 9);
            std::vector<float> bScale =
                perColumn ? std::vector<float>{0.02f, 0.05f, 0.01f} : std::vector<float>{0.03f};
            std::vector<int> bZero = perColumn ? std::vector<int>{3, 0, 5} : std::vector<int>{4};
            Shape sShape = perColumn ? Shape{n} : Shape{1};
            Tensor bT = bType == DataType::Int8
                            ? makeTensor<std::int8_t>({k, n}, asType<std::int8_t>(b))
                            : makeTensor<std::uint8_t>({k, n}, asType<std::uint8_t>(b));
            Tensor zT = bType == DataType::Int8
                            ? makeTensor<std::int8_t>(sShape, asType<std::int8_t>(bZero))
                            : makeTensor<std::uint8_t>(sShape, asType<std::uint8_t>(bZero));
            std::vector<float> bias{1.0f, -0.5f, 0.25f};
            auto spec =
                msNode("DynamicQuantizeMatMul",
                       {floats({m, k}, a), bT, floats(sShape, bScale), zT, floats({n}, bias)});
            std::vector<double> acc = integerReference(aq, aZero, b, bZero, m, k, n);
            std::vector<float> expected(acc.size());
            for (std::size_t i = 0; i < acc.size(); ++i)
                expected[i] = static_cast<float>(
                    acc[i] * double(aScale) * bScale[bScale.size() == 1 ? 0 : i % n] + bias[i % n]);
            EXPECT_TRUE(
                tensorsClose(runOneNodeTensor(spec), floats({m, n}, expected), {1e-5, 1e-4}))
                << dataTypeName(bType) << " per column " << perColumn;
        }
    auto bad =
        runOneNode(msNode("DynamicQuantizeMatMul",
                          {floats({1, 2}, {1, 2}), makeTensor<std::int8_t>({2, 2}, {1, 2, 3, 4}),
                           floats({3}, {1, 1, 1})}));
    EXPECT_TRUE(errorMentions(bad, {"under_test", "b_scale"}));
}

TEST(MsQGemm, FloatAndQuantizedOutputsWithTransposesAndBias) {
    const std::int64_t m = 3, k = 4, n = 2;
    std::vector<int> a = randomInts(m * k, 0, 255, 11), b = randomInts(k * n, -128, 127, 12);
    std::vector<int> c = randomInts(n, -500, 500, 13);
    const float alpha = 0.5f, aScale = 0.05f, yScale = 0.7f;
    const int aZero = 120, yZero = 10;
    // A stored transposed [K, M], B stored transposed [N, K].
    std::vector<int> at(a.size()), bt(b.size());
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t p = 0; p < k; ++p) at[p * m + i] = a[i * k + p];
    for (std::int64_t p = 0; p < k; ++p)
        for (std::int64_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
    for (bool perColumn : {false, true}) {
        std::vector<float> bScale =
            perColumn ? std::vector<float>{0.02f, 0.04f} : std::vector<float>{0.03f};
        std::vector<int> bZero = perColumn ? std::vector<int>{2, -3} : std::vector<int>{1};
        Shape sShape = perColumn ? Shape{n} : Shape{};
        std::vector<double> acc = integerReference(a, aZero, b, bZero, m, k, n);
        for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += c[i % n];
        auto inputs = [&](bool quantized) {
            std::vector<Value> in{makeTensor<std::uint8_t>({k, m}, asType<std::uint8_t>(at)),
                                  Tensor::scalar<float>(aScale),
                                  Tensor::scalar<std::uint8_t>(aZero),
                                  makeTensor<std::int8_t>({n, k}, asType<std::int8_t>(bt)),
                                  floats(sShape, bScale),
                                  makeTensor<std::int8_t>(sShape, asType<std::int8_t>(bZero)),
                                  makeTensor<std::int32_t>({n}, c)};
            if (quantized) {
                in.push_back(Tensor::scalar<float>(yScale));
                in.push_back(Tensor::scalar<std::uint8_t>(yZero));
            }
            return in;
        };
        auto attrs = [alpha](onnx::NodeProto& node) {
            setAttr(node, "alpha", alpha);
            setAttr(node, "transA", std::int64_t{1});
            setAttr(node, "transB", std::int64_t{1});
        };
        std::vector<float> expectedFloat(acc.size());
        std::vector<std::uint8_t> expectedQ(acc.size());
        for (std::size_t i = 0; i < acc.size(); ++i) {
            const double s = alpha * aScale * bScale[bScale.size() == 1 ? 0 : i % n];
            expectedFloat[i] = static_cast<float>(acc[i] * s);
            expectedQ[i] = static_cast<std::uint8_t>(
                std::clamp(std::nearbyint(acc[i] * s / yScale) + yZero, 0.0, 255.0));
        }
        EXPECT_TRUE(tensorsClose(runOneNodeTensor(msNode("QGemm", inputs(false), attrs)),
                                 floats({m, n}, expectedFloat), {1e-5, 1e-4}));
        Tensor q = runOneNodeTensor(msNode("QGemm", inputs(true), attrs));
        ASSERT_EQ(q.dtype(), DataType::UInt8);
        for (std::size_t i = 0; i < expectedQ.size(); ++i)
            EXPECT_NEAR(q.data<std::uint8_t>()[i], expectedQ[i], 1) << i;
    }
    auto bad = runOneNode(msNode(
        "QGemm", {makeTensor<std::uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::scalar<float>(1),
                  Tensor::scalar<std::uint8_t>(0), makeTensor<std::int8_t>({2, 2}, {1, 2, 3, 4}),
                  Tensor::scalar<float>(1), Tensor::scalar<std::int8_t>(0)}));
    EXPECT_TRUE(errorMentions(bad, {"under_test", "inner dimensions"}));
}

// Found by the template sweep under UBSan (HostileAttributesFromTemplates): a NaN scale, or a
// zero y_scale, reached the conversion of NaN to uint8. With an 8-bit output they are errors; a
// float output holds the NaN.
TEST(MsQGemm, NonFiniteRequantizationFactorsAreErrorsForAQuantizedOutput) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    auto inputs = [](float aScale, float bScale, std::optional<float> yScale) {
        std::vector<Value> in{makeTensor<std::uint8_t>({1, 2}, {3, 4}),
                              Tensor::scalar<float>(aScale),
                              Tensor::scalar<std::uint8_t>(1),
                              makeTensor<std::uint8_t>({2, 1}, {5, 6}),
                              Tensor::scalar<float>(bScale),
                              Tensor::scalar<std::uint8_t>(2)};
        if (yScale) {
            in.push_back(Value());
            in.push_back(Tensor::scalar<float>(*yScale));
            in.push_back(Tensor::scalar<std::uint8_t>(128));
        }
        return in;
    };
    EXPECT_TRUE(errorMentions(runOneNode(msNode("QGemm", inputs(0.1f, 0.1f, 0.0f))),
                              {"under_test", "y_scale", "not finite"}));
    EXPECT_TRUE(errorMentions(runOneNode(msNode("QGemm", inputs(nan, 0.1f, 0.5f))),
                              {"under_test", "a_scale", "not finite"}));
    EXPECT_TRUE(errorMentions(runOneNode(msNode("QGemm", inputs(0.1f, inf, 0.5f))),
                              {"under_test", "b_scale", "not finite"}));
    // (3 - 1) * (5 - 2) + (4 - 1) * (6 - 2) = 18; 18 * 0.1 * 0.1 / 0.5 + 128 = 128.36 -> 128.
    Tensor q = runOneNodeTensor(msNode("QGemm", inputs(0.1f, 0.1f, 0.5f)));
    ASSERT_EQ(q.dtype(), DataType::UInt8);
    EXPECT_EQ(q.data<std::uint8_t>()[0], 128);
    // A bias C that overflows the int32 accumulator wraps around (UBSan: signed overflow
    // before): 18 + (2^31 - 1) wraps to -2^31 + 17, times 0.01 in float.
    std::vector<Value> wrapping = inputs(0.1f, 0.1f, std::nullopt);
    wrapping.push_back(makeTensor<std::int32_t>({1}, {std::numeric_limits<std::int32_t>::max()}));
    Tensor w = runOneNodeTensor(msNode("QGemm", wrapping));
    EXPECT_FLOAT_EQ(w.data<float>()[0],
                    static_cast<float>(std::numeric_limits<std::int32_t>::min() + 17) * 0.01f);
    // A float output: NaN in, NaN out.
    Tensor f = runOneNodeTensor(msNode("QGemm", inputs(nan, 0.1f, std::nullopt)));
    ASSERT_EQ(f.dtype(), DataType::Float);
    EXPECT_TRUE(std::isnan(f.data<float>()[0]));
}

}  // namespace
}  // namespace onnxlens::testing
