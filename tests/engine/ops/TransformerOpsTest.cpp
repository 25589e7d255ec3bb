// The kernels behind the transformer fusions: MatMul and Gemm large enough for oneDNN's matmul
// (when the build has it), com.onnxlens FusedMatMul (bias, Gelu epilogue) and Gelu (onnx
// opset 20 and com.onnxlens), each against products and formulas computed here in double.
#include <cmath>

#include "NumericOpTestHelpers.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::testing {
namespace {

// Deterministic values in [-1, 1) that are not small integers (so rounding differences show).
std::vector<double> wave(std::int64_t count, double phase) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::sin(0.37 * static_cast<double>(i) + phase);
    return v;
}

template <class T>
Tensor tensorOf(Shape shape, const std::vector<double>& values) {
    std::vector<T> cast(values.begin(), values.end());
    return makeTensor<T>(std::move(shape), cast);
}

double geluReference(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// [batch, m, k] x [k, n] (+ bias) (then GELU) in double, row-major.
std::vector<double> referenceProduct(const std::vector<double>& a, const std::vector<double>& b,
                                     const std::vector<double>* bias, bool gelu, std::int64_t rows,
                                     std::int64_t k, std::int64_t n) {
    std::vector<double> y(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < n; ++c) {
            double sum = bias ? (*bias)[static_cast<std::size_t>(c)] : 0.0;
            for (std::int64_t i = 0; i < k; ++i)
                sum +=
                    a[static_cast<std::size_t>(r * k + i)] * b[static_cast<std::size_t>(i * n + c)];
            y[static_cast<std::size_t>(r * n + c)] = gelu ? geluReference(sum) : sum;
        }
    return y;
}

OneNodeSpec fusedMatMulSpec(std::vector<Value> inputs, bool gelu) {
    OneNodeSpec spec = nodeSpec("FusedMatMul", 1, std::move(inputs), 1, engine::kOnnxlensDomain);
    if (gelu)
        spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "activation", std::string("Gelu")); };
    return spec;
}

const engine::Tolerance kProductTolerance{1e-4, 1e-4};

TEST(TransformerOps, LargeMatMulWithTwoDimensionalWeightsMatchesTheProduct) {
    // 2 x 50 rows of 80 times [80, 90]: above the size where oneDNN takes over.
    const std::int64_t rows = 100, k = 80, n = 90;
    auto a = wave(rows * k, 0.1), b = wave(k * n, 0.7);
    Tensor y = runOneNodeTensor(nodeSpec(
        "MatMul", 13, {Value(tensorOf<float>({2, 50, k}, a)), Value(tensorOf<float>({k, n}, b))}));
    ASSERT_EQ(y.shape(), (Shape{2, 50, n}));
    EXPECT_TRUE(tensorsClose(
        y, tensorOf<float>({2, 50, n}, referenceProduct(a, b, nullptr, false, rows, k, n)),
        kProductTolerance));
}

TEST(TransformerOps, LargeBatchedMatMulBroadcastsItsBatchDimensions) {
    // [2, 1, 48, 72] x [3, 72, 96] -> [2, 3, 48, 96].
    const std::int64_t m = 48, k = 72, n = 96;
    auto a = wave(2 * m * k, 0.2), b = wave(3 * k * n, 1.1);
    Tensor y = runOneNodeTensor(
        nodeSpec("MatMul", 13,
                 {Value(tensorOf<float>({2, 1, m, k}, a)), Value(tensorOf<float>({3, k, n}, b))}));
    ASSERT_EQ(y.shape(), (Shape{2, 3, m, n}));
    std::vector<double> expected;
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j) {
            std::vector<double> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
            std::vector<double> bj(b.begin() + j * k * n, b.begin() + (j + 1) * k * n);
            auto part = referenceProduct(ai, bj, nullptr, false, m, k, n);
            expected.insert(expected.end(), part.begin(), part.end());
        }
    EXPECT_TRUE(tensorsClose(y, tensorOf<float>({2, 3, m, n}, expected), kProductTolerance));
}

TEST(TransformerOps, FusedMatMulAddsTheBiasAndAppliesGeluOnLargeAndSmallProblems) {
    // The large problem runs on oneDNN's post-ops (when built with it), the small one and the
    // double one on the Eigen product and the epilogue.
    struct Case {
        std::int64_t rows, k, n;
        bool gelu;
    };
    for (const Case c : {Case{128, 64, 96, true}, Case{128, 64, 96, false}, Case{3, 4, 5, true}}) {
        SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.k) + "x" +
                     std::to_string(c.n) + (c.gelu ? " gelu" : ""));
        auto a = wave(c.rows * c.k, 0.3), b = wave(c.k * c.n, 0.9), bias = wave(c.n, 2.0);
        auto expected = referenceProduct(a, b, &bias, c.gelu, c.rows, c.k, c.n);
        Tensor y = runOneNodeTensor(fusedMatMulSpec(
            {Value(tensorOf<float>({1, c.rows, c.k}, a)), Value(tensorOf<float>({c.k, c.n}, b)),
             Value(tensorOf<float>({c.n}, bias))},
            c.gelu));
        EXPECT_TRUE(
            tensorsClose(y, tensorOf<float>({1, c.rows, c.n}, expected), kProductTolerance));
        Tensor yd = runOneNodeTensor(fusedMatMulSpec(
            {Value(tensorOf<double>({1, c.rows, c.k}, a)), Value(tensorOf<double>({c.k, c.n}, b)),
             Value(tensorOf<double>({c.n}, bias))},
            c.gelu));
        EXPECT_TRUE(tensorsClose(yd, tensorOf<double>({1, c.rows, c.n}, expected)));
    }
}

TEST(TransformerOps, FusedMatMulRejectsABiasOfTheWrongLength) {
    auto result = runOneNode(fusedMatMulSpec(
        {Value(tensorOf<float>({2, 3}, wave(6, 0))), Value(tensorOf<float>({3, 4}, wave(12, 0))),
         Value(tensorOf<float>({3}, wave(3, 0)))},
        false));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("one value per column"), std::string::npos)
        << result.error().message;
}

TEST(TransformerOps, LargeGemmWithTransposedWeightsAndBiasMatchesTheProduct) {
    const std::int64_t m = 64, k = 80, n = 72;
    auto a = wave(m * k, 0.4), bt = wave(n * k, 1.3), bias = wave(n, 0.5);
    std::vector<double> b(static_cast<std::size_t>(k * n));  // bt transposed back
    for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            b[static_cast<std::size_t>(i * n + j)] = bt[static_cast<std::size_t>(j * k + i)];
    OneNodeSpec spec =
        nodeSpec("Gemm", 13,
                 {Value(tensorOf<float>({m, k}, a)), Value(tensorOf<float>({n, k}, bt)),
                  Value(tensorOf<float>({n}, bias))});
    spec.attributes = [](onnx::NodeProto& node) { setAttr(node, "transB", std::int64_t{1}); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec),
                             tensorOf<float>({m, n}, referenceProduct(a, b, &bias, false, m, k, n)),
                             kProductTolerance));
}

TEST(TransformerOps, GeluMatchesTheErfFormulaAndTheTanhApproximation) {
    std::vector<double> x;
    for (int i = -40; i <= 40; ++i) x.push_back(i * 0.2);
    x.push_back(-1e30);
    x.push_back(1e30);
    std::vector<double> exact, approx;
    for (double v : x) {
        exact.push_back(geluReference(v));
        approx.push_back(0.5 * v *
                         (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    const Shape shape{static_cast<std::int64_t>(x.size())};
    // onnx Gelu (opset 20) and the com.onnxlens Gelu the optimizer writes; float and double.
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(nodeSpec("Gelu", 20, {Value(tensorOf<float>(shape, x))})),
                     tensorOf<float>(shape, exact)));
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(nodeSpec("Gelu", 1, {Value(tensorOf<double>(shape, x))}, 1,
                                               engine::kOnnxlensDomain)),
                     tensorOf<double>(shape, exact)));
    OneNodeSpec tanhSpec = nodeSpec("Gelu", 20, {Value(tensorOf<float>(shape, x))});
    tanhSpec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "approximate", std::string("tanh"));
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(tanhSpec), tensorOf<float>(shape, approx)));
    OneNodeSpec bad = nodeSpec("Gelu", 20, {Value(tensorOf<float>(shape, x))});
    bad.attributes = [](onnx::NodeProto& n) { setAttr(n, "approximate", std::string("fast")); };
    auto result = runOneNode(bad);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("approximate"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
