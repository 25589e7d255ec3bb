// Matrix products: MatMul (1-D operands, batch broadcasting), Gemm, MatMulInteger,
// QLinearMatMul, Einsum (diagonals, sums, ellipsis, implicit output, chains) and Det.
#include <algorithm>
#include <cmath>

#include "NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

// x[i] = (i * 7 % 5) - 2: small distinct integers, exact in float.
Tensor sequenceTensor(Shape shape) {
    std::vector<float> values(static_cast<std::size_t>(engine::shapeElementCount(shape)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i * 7 % 5) - 2;
    return floats(std::move(shape), values);
}

Tensor runBinary(const std::string& op, Tensor a, Tensor b, int opset = 13) {
    return runOneNodeTensor(nodeSpec(op, opset, {Value(a), Value(b)}));
}

TEST(MatMulOps, TwoByThreeTimesThreeByTwo) {
    Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = floats({3, 2}, {7, 8, 9, 10, 11, 12});
    EXPECT_TRUE(tensorsClose(runBinary("MatMul", a, b), floats({2, 2}, {58, 64, 139, 154})));
}

TEST(MatMulOps, OneDimensionalOperandsLoseTheirDimension) {
    Tensor v = floats({3}, {1, 2, 3});
    Tensor m = floats({3, 2}, {1, 0, 0, 1, 1, 1});
    EXPECT_TRUE(tensorsClose(runBinary("MatMul", v, m), floats({2}, {4, 5})));
    Tensor mt = floats({2, 3}, {1, 0, 1, 0, 1, 1});
    EXPECT_TRUE(tensorsClose(runBinary("MatMul", mt, v), floats({2}, {4, 5})));
    EXPECT_TRUE(tensorsClose(runBinary("MatMul", v, v), floats({}, {14})));
}

TEST(MatMulOps, BatchDimensionsBroadcast) {
    Tensor a = sequenceTensor({2, 1, 2, 3});
    Tensor b = sequenceTensor({3, 3, 4});
    Tensor y = runBinary("MatMul", a, b);
    ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 4}));
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    std::vector<float> expected;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int r = 0; r < 2; ++r)
                for (int c = 0; c < 4; ++c) {
                    float sum = 0;
                    for (int k = 0; k < 3; ++k)
                        sum += pa[i * 6 + r * 3 + k] * pb[j * 12 + k * 4 + c];
                    expected.push_back(sum);
                }
    EXPECT_TRUE(tensorsClose(y, floats({2, 3, 2, 4}, expected)));
}

TEST(MatMulOps, RowBlocksOverThreadsMatchTheNaiveProduct) {
    // One large matrix product, so the kernel splits rows across the two threads.
    const int m = 96, k = 80, n = 72;
    Tensor a = sequenceTensor({m, k});
    Tensor b = sequenceTensor({k, n});
    std::vector<float> expected(static_cast<std::size_t>(m * n), 0.0f);
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c)
            for (int i = 0; i < k; ++i)
                expected[r * n + c] += a.data<float>()[r * k + i] * b.data<float>()[i * n + c];
    auto result = runOneNode(nodeSpec("MatMul", 13, {Value(a), Value(b)}), 2);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_TRUE(tensorsClose(result->at(0).tensor(), floats({m, n}, expected)));
}

TEST(MatMulOps, ZeroInnerDimensionGivesZeros) {
    Tensor y = runBinary("MatMul", floats({2, 0}, {}), floats({0, 3}, {}));
    EXPECT_TRUE(tensorsClose(y, floats({2, 3}, {0, 0, 0, 0, 0, 0})));
    EXPECT_EQ(runBinary("MatMul", floats({0, 2}, {}), floats({2, 3}, {0, 0, 0, 0, 0, 0})).shape(),
              (Shape{0, 3}));
}

TEST(MatMulOps, IntegerAndHalfTypes) {
    Tensor a = makeTensor<std::int32_t>({1, 2}, {3, -4});
    Tensor b = makeTensor<std::int32_t>({2, 1}, {5, 6});
    EXPECT_EQ(runBinary("MatMul", a, b).data<std::int32_t>()[0], -9);
    Tensor ha = makeTensor<engine::float16>({1, 2}, {engine::float16(0.5f), engine::float16(2.0f)});
    Tensor hb = makeTensor<engine::float16>({2, 1}, {engine::float16(4.0f), engine::float16(1.5f)});
    Tensor y = runBinary("MatMul", ha, hb);
    ASSERT_EQ(y.dtype(), DataType::Float16);
    EXPECT_EQ(static_cast<float>(y.data<engine::float16>()[0]), 5.0f);
}

TEST(MatMulOps, InnerDimensionMismatchIsAnError) {
    auto result = runOneNode(nodeSpec("MatMul", 13,
                                      {Value(floats({2, 3}, std::vector<float>(6))),
                                       Value(floats({2, 2}, std::vector<float>(4)))}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("inner dimensions"), std::string::npos)
        << result.error().message;
}

TEST(GemmOps, TransposesAlphaBetaAndBroadcastC) {
    // A stored transposed (3x2), B stored transposed (2x3): op(A) = [[1,2,3],[4,5,6]],
    // op(B) = [[1,0],[0,1],[1,1]] -> op(A) op(B) = [[4,5],[10,11]].
    Tensor a = floats({3, 2}, {1, 4, 2, 5, 3, 6});
    Tensor b = floats({2, 3}, {1, 0, 1, 0, 1, 1});
    Tensor c = floats({2}, {100, 200});  // a row, broadcast over M
    OneNodeSpec spec = nodeSpec("Gemm", 13, {Value(a), Value(b), Value(c)});
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "transA", std::int64_t{1});
        setAttr(node, "transB", std::int64_t{1});
        setAttr(node, "alpha", 2.0f);
        setAttr(node, "beta", 0.5f);
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floats({2, 2}, {58, 110, 70, 122})));
}

TEST(GemmOps, ScalarAndAbsentC) {
    Tensor a = floats({1, 2}, {1, 2});
    Tensor b = floats({2, 2}, {3, 4, 5, 6});
    OneNodeSpec withScalar = nodeSpec("Gemm", 13, {Value(a), Value(b), Value(floats({}, {1}))});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(withScalar), floats({1, 2}, {14, 17})));
    OneNodeSpec withoutC = nodeSpec("Gemm", 13, {Value(a), Value(b)});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(withoutC), floats({1, 2}, {13, 16})));
}

TEST(GemmOps, CThatDoesNotBroadcastIsAnError) {
    OneNodeSpec spec =
        nodeSpec("Gemm", 13,
                 {Value(floats({2, 2}, {1, 2, 3, 4})), Value(floats({2, 2}, {1, 0, 0, 1})),
                  Value(floats({3}, {1, 2, 3}))});
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("broadcast"), std::string::npos);
}

TEST(MatMulIntegerOps, ZeroPointsPerRowAndColumn) {
    Tensor a = makeTensor<std::uint8_t>({2, 2}, {10, 12, 20, 21});
    Tensor b = makeTensor<std::int8_t>({2, 2}, {1, -1, 2, 3});
    Tensor aZero = makeTensor<std::uint8_t>({2}, {10, 20});  // per row
    Tensor bZero = makeTensor<std::int8_t>({}, {1});
    OneNodeSpec spec =
        nodeSpec("MatMulInteger", 10, {Value(a), Value(b), Value(aZero), Value(bZero)});
    // (a - azp) = [[0,2],[0,1]], (b - bzp) = [[0,-2],[1,2]].
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::Int32);
    EXPECT_EQ(
        std::vector<std::int32_t>(y.span<std::int32_t>().begin(), y.span<std::int32_t>().end()),
        (std::vector<std::int32_t>{2, 4, 1, 2}));
}

// One session, several runs: the int8 product's oneDNN arguments are kept between calls and
// pointed at each run's A and Y (and at new weights when B changes). Rows over the few-row kernel's
// limit (oneDNN's path); weights at both ends of the range; exact against the integer sum.
TEST(MatMulIntegerOps, OneSessionReadsEachRunsOperands) {
    constexpr std::int64_t rows = 9, k = 70, n = 45;
    auto bytes = [](std::int64_t count, int seed, int lo, int hi) {
        std::vector<int> v(static_cast<std::size_t>(count));
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = lo + static_cast<int>((i * 37 + static_cast<std::size_t>(seed) * 101) %
                                         static_cast<std::size_t>(hi - lo + 1));
        return v;
    };
    auto uint8Tensor = [](const Shape& shape, const std::vector<int>& v) {
        std::vector<std::uint8_t> b(v.begin(), v.end());
        return makeTensor<std::uint8_t>(shape, b);
    };
    auto int8Tensor = [](const Shape& shape, const std::vector<int>& v) {
        std::vector<std::int8_t> b(v.begin(), v.end());
        return makeTensor<std::int8_t>(shape, b);
    };
    std::vector<int> w = bytes(k * n, 1, -128, 127);
    OneNodeSpec spec =
        nodeSpec("MatMulInteger", 10,
                 {Value(uint8Tensor({rows, k}, bytes(rows * k, 0, 0, 255))),
                  Value(int8Tensor({k, n}, w)), Value(makeTensor<std::uint8_t>({}, {0}))});
    LoadedModel loaded;
    loaded.path = "matmul_integer.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(buildOneNodeModel(spec));
    auto session = engine::Session::create(loaded, {});
    ASSERT_TRUE(session) << session.error().message;
    Value weights(int8Tensor({k, n}, w));
    for (int run = 0; run < 4; ++run) {
        SCOPED_TRACE("run " + std::to_string(run));
        const std::vector<int> a = bytes(rows * k, run + 2, 0, 255);
        const int zeroPoint = 40 * run;
        if (run == 3) {
            w = bytes(k * n, 7, -128, 127);
            weights = Value(int8Tensor({k, n}, w));
        }
        auto out = (*session)->run(
            {{"x0", Value(uint8Tensor({rows, k}, a))},
             {"x1", weights},
             {"x2", Value(makeTensor<std::uint8_t>({}, {static_cast<std::uint8_t>(zeroPoint)}))}});
        ASSERT_TRUE(out) << out.error().message;
        const Tensor& y = (*out)[0].tensor();
        ASSERT_EQ(y.shape(), (Shape{rows, n}));
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t j = 0; j < n; ++j) {
                std::int64_t sum = 0;
                for (std::int64_t i = 0; i < k; ++i)
                    sum += static_cast<std::int64_t>(a[static_cast<std::size_t>(r * k + i)] -
                                                     zeroPoint) *
                           w[static_cast<std::size_t>(i * n + j)];
                ASSERT_EQ(y.data<std::int32_t>()[r * n + j], sum) << r << ", " << j;
            }
    }
}

TEST(QLinearMatMulOps, RequantizesWithRoundHalfToEven) {
    Tensor a = makeTensor<std::uint8_t>({1, 2}, {3, 4});
    Tensor b = makeTensor<std::uint8_t>({2, 2}, {1, 2, 3, 4});
    auto scale = [](float s) { return Value(makeTensor<float>({}, {s})); };
    auto zeroPoint = [](std::uint8_t z) { return Value(makeTensor<std::uint8_t>({}, {z})); };
    // a - 1 = [2, 3]; b - 0; acc = [2*1 + 3*3, 2*2 + 3*4] = [11, 16];
    // y = acc * (1 * 0.5 / 1) + 10 = [15.5 -> 16, 18].
    OneNodeSpec spec = nodeSpec("QLinearMatMul", 10,
                                {Value(a), scale(1.0f), zeroPoint(1), Value(b), scale(0.5f),
                                 zeroPoint(0), scale(1.0f), zeroPoint(10)});
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::UInt8);
    EXPECT_EQ(y.data<std::uint8_t>()[0], 16);
    EXPECT_EQ(y.data<std::uint8_t>()[1], 18);
}

// A classifier-sized product with uint8 A and full-range int8 B (zero point 0) goes through the
// int8 matmul kernel: its int32 sums must be the exact ones, pairs of 255 x 127 and 255 x -128
// included (they saturate int16 on CPUs without VNNI), and requantized as the spec says.
TEST(QLinearMatMulOps, Int8WeightsGiveTheExactRequantizedProduct) {
    const std::int64_t k = 64, n = 24;
    std::vector<std::uint8_t> av(static_cast<std::size_t>(2 * k));
    std::vector<std::int8_t> bv(static_cast<std::size_t>(k * n));
    for (std::size_t i = 0; i < av.size(); ++i)
        av[i] = i % 3 == 0 ? 255 : static_cast<std::uint8_t>(i * 37 % 256);
    for (std::size_t i = 0; i < bv.size(); ++i)
        bv[i] = i % 4 == 0 ? 127 : i % 4 == 1 ? -128 : static_cast<std::int8_t>(i * 53 % 256 - 128);
    const float aScale = 0.02f, bScale = 0.01f, yScale = 2.5f;
    const std::uint8_t aZero = 7, yZero = 128;
    OneNodeSpec spec = nodeSpec(
        "QLinearMatMul", 10,
        {Value(makeTensor<std::uint8_t>({2, k}, av)), Value(makeTensor<float>({}, {aScale})),
         Value(makeTensor<std::uint8_t>({}, {aZero})), Value(makeTensor<std::int8_t>({k, n}, bv)),
         Value(makeTensor<float>({}, {bScale})), Value(makeTensor<std::int8_t>({}, {0})),
         Value(makeTensor<float>({}, {yScale})), Value(makeTensor<std::uint8_t>({}, {yZero}))});
    const Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::UInt8);
    ASSERT_EQ(y.shape(), (Shape{2, n}));
    int saturatedBothWays = 0;
    for (std::int64_t r = 0; r < 2; ++r)
        for (std::int64_t c = 0; c < n; ++c) {
            std::int64_t acc = 0;
            for (std::int64_t i = 0; i < k; ++i)
                acc +=
                    (static_cast<std::int64_t>(av[static_cast<std::size_t>(r * k + i)]) - aZero) *
                    bv[static_cast<std::size_t>(i * n + c)];
            const double q = std::nearbyint(static_cast<double>(acc) *
                                            (static_cast<double>(aScale) * bScale / yScale)) +
                             yZero;
            const int expected = static_cast<int>(std::clamp(q, 0.0, 255.0));
            saturatedBothWays += expected == 0 || expected == 255;
            ASSERT_EQ(y.data<std::uint8_t>()[r * n + c], expected) << r << ", " << c;
        }
    EXPECT_LT(saturatedBothWays, 2 * n);  // the figures are not all clipped
}

Tensor runEinsum(const std::string& equation, std::vector<Tensor> operands) {
    OneNodeSpec spec = nodeSpec("Einsum", 12, {});
    for (auto& t : operands) spec.inputs.push_back(Value(t));
    spec.attributes = [=](onnx::NodeProto& node) { setAttr(node, "equation", equation); };
    return runOneNodeTensor(spec);
}

TEST(EinsumOps, MatrixProductTransposeDiagonalAndSums) {
    Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = floats({3, 2}, {7, 8, 9, 10, 11, 12});
    EXPECT_TRUE(tensorsClose(runEinsum("ij,jk->ik", {a, b}), floats({2, 2}, {58, 64, 139, 154})));
    EXPECT_TRUE(tensorsClose(runEinsum("ij,jk", {a, b}), floats({2, 2}, {58, 64, 139, 154})));
    EXPECT_TRUE(tensorsClose(runEinsum("ij->ji", {a}), floats({3, 2}, {1, 4, 2, 5, 3, 6})));
    EXPECT_TRUE(tensorsClose(runEinsum("ij->", {a}), floats({}, {21})));
    EXPECT_TRUE(tensorsClose(runEinsum("ij->j", {a}), floats({3}, {5, 7, 9})));
    Tensor square = floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    EXPECT_TRUE(tensorsClose(runEinsum("ii->i", {square}), floats({3}, {1, 5, 9})));
    EXPECT_TRUE(tensorsClose(runEinsum("ii", {square}), floats({}, {15})));
    Tensor v = floats({3}, {1, 2, 3});
    EXPECT_TRUE(tensorsClose(runEinsum("i,i->", {v, v}), floats({}, {14})));
    EXPECT_TRUE(tensorsClose(runEinsum("i,j->ij", {v, floats({2}, {1, -1})}),
                             floats({3, 2}, {1, -1, 2, -2, 3, -3})));
}

TEST(EinsumOps, ImplicitOutputSortsLabelsInAsciiOrder) {
    // "ba" in implicit mode outputs "ab": a transpose.
    Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_TRUE(tensorsClose(runEinsum("ba", {a}), floats({3, 2}, {1, 4, 2, 5, 3, 6})));
}

TEST(EinsumOps, EllipsisBroadcastsBatchDims) {
    Tensor a = sequenceTensor({2, 2, 3});
    Tensor b = sequenceTensor({1, 3, 2});
    Tensor viaEinsum = runEinsum("...ij,...jk->...ik", {a, b});
    Tensor viaMatMul = runBinary("MatMul", a, b);
    EXPECT_TRUE(tensorsClose(viaEinsum, viaMatMul));
}

TEST(EinsumOps, ThreeOperandChainMatchesTwoMatMuls) {
    Tensor a = sequenceTensor({2, 3});
    Tensor b = sequenceTensor({3, 4});
    Tensor c = sequenceTensor({4, 2});
    Tensor expected = runBinary("MatMul", runBinary("MatMul", a, b), c);
    EXPECT_TRUE(tensorsClose(runEinsum("ij,jk,kl->il", {a, b, c}), expected));
}

TEST(EinsumOps, BatchedAttentionScores) {
    Tensor q = sequenceTensor({2, 3, 4});
    Tensor k = sequenceTensor({2, 5, 4});
    Tensor scores = runEinsum("bqd,bkd->bqk", {q, k});
    ASSERT_EQ(scores.shape(), (Shape{2, 3, 5}));
    const float* pq = q.data<float>();
    const float* pk = k.data<float>();
    float expected = 0;  // scores[1][2][3]
    for (int d = 0; d < 4; ++d) expected += pq[12 + 2 * 4 + d] * pk[20 + 3 * 4 + d];
    EXPECT_FLOAT_EQ(scores.data<float>()[15 + 2 * 5 + 3], expected);
}

TEST(EinsumOps, BadEquationsAreErrors) {
    Tensor a = floats({2, 3}, std::vector<float>(6));
    OneNodeSpec spec =
        nodeSpec("Einsum", 12, {Value(a), Value(floats({2, 3}, std::vector<float>(6)))});
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "equation", std::string("ij,jk->ik"));
    };
    auto mismatch = runOneNode(spec);
    ASSERT_FALSE(mismatch);
    EXPECT_NE(mismatch.error().message.find("does not match"), std::string::npos)
        << mismatch.error().message;
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "equation", std::string("ij->ik"));
    };
    spec.inputs.pop_back();
    EXPECT_FALSE(runOneNode(spec));
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "equation", std::string("ij,jk->ik"));
    };
    auto count = runOneNode(spec);
    ASSERT_FALSE(count);
    EXPECT_NE(count.error().message.find("operands"), std::string::npos) << count.error().message;
}

TEST(DetOps, TwoByTwoThreeByThreeAndBatches) {
    Tensor y = runOneNodeTensor(nodeSpec("Det", 11, {Value(floats({2, 2}, {3, 8, 4, 6}))}));
    EXPECT_TRUE(tensorsClose(y, floats({}, {-14})));
    Tensor batch = floats({2, 3, 3}, {2, 0, 0, 0, 3, 0, 0, 0, 4,  //
                                      6, 1, 1, 4, -2, 5, 2, 8, 7});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(nodeSpec("Det", 11, {Value(batch)})),
                             floats({2}, {24, -306})));
}

TEST(DetOps, NonSquareIsAnError) {
    auto result = runOneNode(nodeSpec("Det", 11, {Value(floats({2, 3}, std::vector<float>(6)))}));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("square"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
