// ONNX Runtime's fused products as its `extended` optimization level saves them (com.microsoft
// FusedConv, FusedGemm, FusedMatMul), each against a double-precision reference written here:
// odd sizes, every activation, the transposes and alpha, FusedConv's Z input, FusedGemm's bias
// broadcasts, and the errors hostile attributes get (naming the node). Also the optimizer's
// adopt-ort-fused-conv pass: the optimized session computes what the node computes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "../GraphBuilding.h"
#include "NumericOpTestHelpers.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::testing {
namespace {

using engine::shapeToString;

constexpr const char* kMs = "com.microsoft";
const engine::Tolerance kTolerance{1e-4, 1e-4};

std::vector<double> wave(std::int64_t count, double phase) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::sin(0.61 * static_cast<double>(i) + phase) * 1.7;
    return v;
}

template <class T>
Tensor tensorOf(Shape shape, const std::vector<double>& values) {
    return makeTensor<T>(std::move(shape), std::vector<T>(values.begin(), values.end()));
}

std::int64_t count(const Shape& s) {
    return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>());
}

// ---- FusedConv ----------------------------------------------------------------------------

struct Activation {
    std::string name;  // "" = none
    std::vector<float> params;
    double apply(double x) const {
        if (name == "Relu") return std::max(x, 0.0);
        if (name == "Tanh") return std::tanh(x);
        if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
        if (name == "LeakyRelu") return x < 0 ? params[0] * x : x;
        if (name == "Clip") return std::min(std::max(x, double(params[0])), double(params[1]));
        if (name == "HardSigmoid") return std::clamp(params[0] * x + params[1], 0.0, 1.0);
        return x;
    }
};

// 2-D convolution in double: x [N, C, H, W], w [M, C/G, kh, kw], symmetric pads, y [N, M, oh,
// ow] = activation(conv + b + z).
std::vector<double> referenceConv(const std::vector<double>& x, const Shape& xs,
                                  const std::vector<double>& w, const Shape& ws,
                                  const std::vector<double>& b, const std::vector<double>* z,
                                  std::int64_t group, std::int64_t stride, std::int64_t pad,
                                  const Activation& act, Shape& ys) {
    const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    const std::int64_t M = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3], Mg = M / group;
    const std::int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    ys = {N, M, OH, OW};
    std::vector<double> y(static_cast<std::size_t>(count(ys)));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t oy = 0; oy < OH; ++oy)
                for (std::int64_t ox = 0; ox < OW; ++ox) {
                    double sum = b[static_cast<std::size_t>(m)];
                    const std::int64_t g = m / Mg;
                    for (std::int64_t c = 0; c < Cg; ++c)
                        for (std::int64_t ky = 0; ky < KH; ++ky)
                            for (std::int64_t kx = 0; kx < KW; ++kx) {
                                const std::int64_t iy = oy * stride - pad + ky,
                                                   ix = ox * stride - pad + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                sum +=
                                    x[static_cast<std::size_t>(((n * C + g * Cg + c) * H + iy) * W +
                                                               ix)] *
                                    w[static_cast<std::size_t>(((m * Cg + c) * KH + ky) * KW + kx)];
                            }
                    const auto at = static_cast<std::size_t>(((n * M + m) * OH + oy) * OW + ox);
                    if (z) sum += (*z)[at];
                    y[at] = act.apply(sum);
                }
    return y;
}

OneNodeSpec fusedConvSpec(std::vector<Value> inputs, std::int64_t group, std::int64_t stride,
                          std::int64_t pad, const Activation& act) {
    OneNodeSpec spec = nodeSpec("FusedConv", 1, std::move(inputs), 1, kMs);
    spec.attributes = [=](onnx::NodeProto& n) {
        setAttr(n, "group", group);
        setAttr(n, "strides", std::vector<std::int64_t>{stride, stride});
        setAttr(n, "pads", std::vector<std::int64_t>{pad, pad, pad, pad});
        if (!act.name.empty()) setAttr(n, "activation", act.name);
        if (!act.params.empty()) setAttr(n, "activation_params", act.params);
    };
    return spec;
}

const std::vector<Activation>& convActivations() {
    static const std::vector<Activation> all{
        {"", {}},
        {"Relu", {}},
        {"Tanh", {}},
        {"Sigmoid", {}},
        {"LeakyRelu", {0.15f}},
        {"Clip", {-0.4f, 0.6f}},
        {"HardSigmoid", {0.3f, 0.45f}},
    };
    return all;
}

TEST(MsFusedConv, EveryActivationWithAndWithoutZMatchesTheReference) {
    struct Case {
        Shape x, w;
        std::int64_t group, stride, pad;
    };
    // A plain convolution, a grouped one and a depthwise one (odd sizes, stride 2 on one).
    for (const Case& c :
         {Case{{2, 3, 7, 6}, {5, 3, 3, 2}, 1, 1, 1}, Case{{1, 4, 9, 5}, {6, 2, 3, 3}, 2, 2, 1},
          Case{{1, 3, 5, 7}, {3, 1, 3, 3}, 3, 1, 0}}) {
        const auto x = wave(count(c.x), 0.2), w = wave(count(c.w), 1.3), b = wave(c.w[0], 2.1);
        for (const Activation& act : convActivations())
            for (bool withZ : {false, true}) {
                SCOPED_TRACE("group " + std::to_string(c.group) + " activation '" + act.name +
                             (withZ ? "' with Z" : "'"));
                Shape ys;
                referenceConv(x, c.x, w, c.w, b, nullptr, c.group, c.stride, c.pad, act, ys);
                const auto z = wave(count(ys), 0.9);
                const auto expected = referenceConv(x, c.x, w, c.w, b, withZ ? &z : nullptr,
                                                    c.group, c.stride, c.pad, act, ys);
                std::vector<Value> inputs{Value(tensorOf<float>(c.x, x)),
                                          Value(tensorOf<float>(c.w, w)),
                                          Value(tensorOf<float>({c.w[0]}, b))};
                if (withZ) inputs.emplace_back(tensorOf<float>(ys, z));
                Tensor y = runOneNodeTensor(fusedConvSpec(inputs, c.group, c.stride, c.pad, act));
                EXPECT_TRUE(tensorsClose(y, tensorOf<float>(ys, expected), kTolerance));
                // double runs the engine's own loops (oneDNN takes float only).
                std::vector<Value> doubles{Value(tensorOf<double>(c.x, x)),
                                           Value(tensorOf<double>(c.w, w)),
                                           Value(tensorOf<double>({c.w[0]}, b))};
                if (withZ) doubles.emplace_back(tensorOf<double>(ys, z));
                Tensor yd = runOneNodeTensor(fusedConvSpec(doubles, c.group, c.stride, c.pad, act));
                EXPECT_TRUE(tensorsClose(yd, tensorOf<double>(ys, expected)));
            }
    }
}

std::string errorOf(const OneNodeSpec& spec) {
    auto result = runOneNode(spec);
    return result ? std::string("(no error)") : result.error().message;
}

TEST(MsFusedConv, HostileActivationsAndZAreRefusedNamingTheNode) {
    const Shape xs{1, 2, 4, 4}, ws{3, 2, 3, 3};
    auto inputs = [&] {
        return std::vector<Value>{Value(tensorOf<float>(xs, wave(count(xs), 0))),
                                  Value(tensorOf<float>(ws, wave(count(ws), 1))),
                                  Value(tensorOf<float>({3}, wave(3, 2)))};
    };
    struct Bad {
        Activation act;
        const char* message;
    };
    for (const Bad& bad : {Bad{{"Swish", {}}, "unknown fused activation 'Swish'"},
                           Bad{{"Clip", {0.0f}}, "Clip needs 2 activation_params, got 1"},
                           Bad{{"Clip", {}}, "Clip needs 2 activation_params, got 0"},
                           Bad{{"LeakyRelu", {0.1f, 0.2f}}, "needs 1 activation_params, got 2"},
                           Bad{{"HardSigmoid", {0.1f, 0.2f, 0.3f}}, "got 3"}}) {
        const std::string message = errorOf(fusedConvSpec(inputs(), 1, 1, 1, bad.act));
        EXPECT_NE(message.find(bad.message), std::string::npos) << message;
        // The optimizer leaves such a node as ONNX Runtime wrote it: the error names its domain.
        EXPECT_NE(message.find("com.microsoft::FusedConv"), std::string::npos) << message;
    }
    auto withZ = inputs();
    withZ.emplace_back(tensorOf<float>({1, 3, 4, 3}, wave(36, 0)));
    const std::string message = errorOf(fusedConvSpec(withZ, 1, 1, 1, {"Relu", {}}));
    EXPECT_NE(message.find("the summed input Z must have the output's type and shape [1x3x4x4]"),
              std::string::npos)
        << message;
    auto badGroup = inputs();
    EXPECT_NE(errorOf(fusedConvSpec(badGroup, 0, 1, 1, {"Relu", {}})).find("group"),
              std::string::npos);
}

// ---- FusedGemm ----------------------------------------------------------------------------

struct GemmActivation {
    std::string name;
    std::optional<float> alpha, beta, gamma;
    double apply(double x) const {
        const double a = alpha.value_or(0), b = beta.value_or(0), g = gamma.value_or(0);
        auto softplus = [](double v) { return std::log1p(std::exp(v)); };
        if (name == "Relu") return std::max(x, 0.0);
        if (name == "Tanh") return std::tanh(x);
        if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
        if (name == "LeakyRelu") return x >= 0 ? x : a * x;
        if (name == "HardSigmoid") return std::clamp(a * x + b, 0.0, 1.0);
        if (name == "Elu") return x >= 0 ? x : a * (std::exp(x) - 1);
        if (name == "Selu") return x > 0 ? g * x : g * a * (std::exp(x) - 1);
        if (name == "Softplus") return softplus(x);
        if (name == "Softsign") return x / (1 + std::abs(x));
        if (name == "ThresholdedRelu") return x > a ? x : 0.0;
        if (name == "ParametricSoftplus") return a * softplus(b * x);
        if (name == "ScaledTanh") return a * std::tanh(b * x);
        ADD_FAILURE() << "no reference for " << name;
        return x;
    }
};

OneNodeSpec fusedGemmSpec(std::vector<Value> inputs, bool transA, bool transB, float alpha,
                          float beta, const GemmActivation& act) {
    OneNodeSpec spec = nodeSpec("FusedGemm", 1, std::move(inputs), 1, kMs);
    spec.attributes = [=](onnx::NodeProto& n) {
        setAttr(n, "transA", std::int64_t{transA});
        setAttr(n, "transB", std::int64_t{transB});
        setAttr(n, "alpha", alpha);
        setAttr(n, "beta", beta);
        if (!act.name.empty()) setAttr(n, "activation", act.name);
        if (act.alpha) setAttr(n, "activation_alpha", *act.alpha);
        if (act.beta) setAttr(n, "activation_beta", *act.beta);
        if (act.gamma) setAttr(n, "activation_gamma", *act.gamma);
    };
    return spec;
}

TEST(MsFusedGemm, EveryActivationTransposeAndBiasBroadcastMatchesTheReference) {
    const std::int64_t M = 5, K = 7, N = 3;
    const std::vector<GemmActivation> activations{
        {"Relu", {}, {}, {}},
        {"Tanh", {}, {}, {}},
        {"Sigmoid", {}, {}, {}},
        {"LeakyRelu", 0.2f, {}, {}},
        {"HardSigmoid", 0.25f, 0.4f, {}},
        {"Elu", 0.8f, {}, {}},
        {"Selu", 1.6f, {}, 1.05f},
        {"Softplus", {}, {}, {}},
        {"Softsign", {}, {}, {}},
        {"ThresholdedRelu", 0.3f, {}, {}},
        {"ParametricSoftplus", 0.7f, 1.4f, {}},
        {"ScaledTanh", 1.5f, 0.6f, {}},
    };
    // C as one value per column, one per row, a scalar, the whole [M, N], and absent.
    const std::vector<Shape> biasShapes{{N}, {M, 1}, {}, {M, N}, {0}};
    const auto a = wave(M * K, 0.4), b = wave(K * N, 1.7), c = wave(M * N, 2.6);
    const float alpha = 0.75f, beta = 1.25f;
    for (const auto& act : activations)
        for (bool transA : {false, true})
            for (bool transB : {false, true})
                for (const Shape& cs : biasShapes) {
                    const bool withC = cs != Shape{0};
                    SCOPED_TRACE(act.name + (transA ? " transA" : "") + (transB ? " transB" : "") +
                                 (withC ? " C " + shapeToString(cs) : " no C"));
                    // Stored operands: A [M, K] or [K, M], B [K, N] or [N, K].
                    std::vector<double> as(a.size()), bs(b.size());
                    for (std::int64_t i = 0; i < M; ++i)
                        for (std::int64_t k = 0; k < K; ++k)
                            as[static_cast<std::size_t>(transA ? k * M + i : i * K + k)] =
                                a[static_cast<std::size_t>(i * K + k)];
                    for (std::int64_t k = 0; k < K; ++k)
                        for (std::int64_t j = 0; j < N; ++j)
                            bs[static_cast<std::size_t>(transB ? j * K + k : k * N + j)] =
                                b[static_cast<std::size_t>(k * N + j)];
                    std::vector<double> cv(c.begin(), c.begin() + count(cs));
                    std::vector<double> expected(static_cast<std::size_t>(M * N));
                    for (std::int64_t i = 0; i < M; ++i)
                        for (std::int64_t j = 0; j < N; ++j) {
                            double sum = 0;
                            for (std::int64_t k = 0; k < K; ++k)
                                sum += a[static_cast<std::size_t>(i * K + k)] *
                                       b[static_cast<std::size_t>(k * N + j)];
                            double bias = 0;
                            if (withC) {
                                const std::int64_t at = cs.empty()       ? 0
                                                        : cs.size() == 1 ? j
                                                        : cs[1] == 1     ? i
                                                                         : i * N + j;
                                bias = cv[static_cast<std::size_t>(at)];
                            }
                            expected[static_cast<std::size_t>(i * N + j)] =
                                act.apply(alpha * sum + beta * bias);
                        }
                    std::vector<Value> inputs{
                        Value(tensorOf<float>(transA ? Shape{K, M} : Shape{M, K}, as)),
                        Value(tensorOf<float>(transB ? Shape{N, K} : Shape{K, N}, bs))};
                    if (withC) inputs.emplace_back(tensorOf<float>(cs, cv));
                    Tensor y =
                        runOneNodeTensor(fusedGemmSpec(inputs, transA, transB, alpha, beta, act));
                    EXPECT_TRUE(tensorsClose(y, tensorOf<float>({M, N}, expected), kTolerance));
                }
}

TEST(MsFusedGemm, AGemmLargeEnoughForOneDnnStillAppliesItsActivation) {
    // The Linear form (alpha 1, beta 1, C one row) runs on oneDNN when the build has it.
    const std::int64_t M = 70, K = 64, N = 80;
    const auto a = wave(M * K, 0.1), b = wave(N * K, 0.5), c = wave(N, 0.8);
    std::vector<double> expected(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double sum = c[static_cast<std::size_t>(j)];
            for (std::int64_t k = 0; k < K; ++k)
                sum +=
                    a[static_cast<std::size_t>(i * K + k)] * b[static_cast<std::size_t>(j * K + k)];
            expected[static_cast<std::size_t>(i * N + j)] = std::tanh(sum);
        }
    Tensor y = runOneNodeTensor(
        fusedGemmSpec({Value(tensorOf<float>({M, K}, a)), Value(tensorOf<float>({N, K}, b)),
                       Value(tensorOf<float>({N}, c))},
                      false, true, 1.0f, 1.0f, {"Tanh", {}, {}, {}}));
    EXPECT_TRUE(tensorsClose(y, tensorOf<float>({M, N}, expected), kTolerance));
}

TEST(MsFusedGemm, HostileActivationsAreRefusedNamingTheNodeAndTheAttribute) {
    auto inputs = [] {
        return std::vector<Value>{Value(tensorOf<float>({2, 3}, wave(6, 0))),
                                  Value(tensorOf<float>({3, 4}, wave(12, 1)))};
    };
    struct Bad {
        GemmActivation act;
        const char* message;
    };
    for (const Bad& bad :
         {Bad{{"Gelu", {}, {}, {}}, "FusedGemm: unknown activation 'Gelu'"},
          Bad{{"", {}, {}, {}}, "FusedGemm: the attribute activation is missing"},
          Bad{{"LeakyRelu", {}, {}, {}},
              "activation LeakyRelu needs the attribute activation_alpha"},
          Bad{{"HardSigmoid", 0.2f, {}, {}},
              "activation HardSigmoid needs the attribute activation_beta"},
          Bad{{"Selu", 1.0f, {}, {}}, "activation Selu needs the attribute activation_gamma"}}) {
        const std::string message = errorOf(fusedGemmSpec(inputs(), false, false, 1, 1, bad.act));
        EXPECT_NE(message.find(bad.message), std::string::npos) << message;
        EXPECT_NE(message.find("FusedGemm"), std::string::npos) << message;
    }
    const std::string ints = errorOf(fusedGemmSpec({Value(makeTensor<std::int32_t>({1, 1}, {1})),
                                                    Value(makeTensor<std::int32_t>({1, 1}, {2}))},
                                                   false, false, 1, 1, {"Relu", {}, {}, {}}));
    EXPECT_NE(ints.find("A must be a floating-point tensor"), std::string::npos) << ints;
    const std::string inner = errorOf(fusedGemmSpec(
        {Value(tensorOf<float>({2, 3}, wave(6, 0))), Value(tensorOf<float>({4, 3}, wave(12, 0)))},
        false, false, 1, 1, {"Relu", {}, {}, {}}));
    EXPECT_NE(inner.find("inner dimensions differ"), std::string::npos) << inner;
}

TEST(MsFusedGemm, WithConstantInputsTheOptimizedSessionComputesTheSame) {
    // Constant folding folds default-domain nodes only: the node stays and its kernel runs it.
    auto m = emptyModel(17);
    auto* ms = m.add_opset_import();
    ms->set_domain(kMs);
    ms->set_version(1);
    auto& g = *m.mutable_graph();
    g.set_name("g");
    addFloatInput(g, "x", {2, 4});
    addInitializer(g, "a", tensorOf<float>({2, 3}, wave(6, 0.1)));
    addInitializer(g, "b", tensorOf<float>({3, 4}, wave(12, 0.5)));
    addInitializer(g, "c", tensorOf<float>({4}, wave(4, 0.9)));
    auto* gemm = addNode(g, "FusedGemm", {"a", "b", "c"}, {"h"});
    gemm->set_domain(kMs);
    setAttr(*gemm, "activation", std::string("Tanh"));
    addNode(g, "Add", {"h", "x"}, {"y"});
    g.add_output()->set_name("y");
    auto optimized = m;
    engine::optimizeModel(optimized, {});
    EXPECT_EQ(opCounts(optimized)["FusedGemm"], 1);
    const Tensor x = tensorOf<float>({2, 4}, wave(8, 1.3));
    auto plain = compileForTest(m, false);
    auto fast = compileForTest(m, true);
    ASSERT_TRUE(plain && fast);
    auto expected = plain->run({{"x", Value(x)}});
    auto actual = fast->run({{"x", Value(x)}});
    ASSERT_TRUE(expected && actual);
    EXPECT_TRUE(tensorsClose(actual->at(0).tensor(), expected->at(0).tensor(), kTolerance));
}

// ---- FusedMatMul --------------------------------------------------------------------------

struct Operand {
    std::vector<double> values;
    Shape shape;
};

// The operand as the product reads it: transBatch moves dim 0 behind the batch dims, trans
// swaps the last two (rank >= 2).
Operand logical(const Operand& stored, bool batchFirst, bool trans) {
    const std::size_t r = stored.shape.size();
    std::vector<std::size_t> perm(r);
    std::iota(perm.begin(), perm.end(), 0);
    if (batchFirst) {
        perm.erase(perm.begin());
        perm.insert(perm.end() - 1, 0);
    }
    if (trans && r >= 2) std::swap(perm[r - 1], perm[r - 2]);
    Operand out;
    for (auto p : perm) out.shape.push_back(stored.shape[p]);
    std::vector<std::int64_t> strides(r, 1);
    for (std::size_t d = r; d-- > 1;) strides[d - 1] = strides[d] * stored.shape[d];
    out.values.resize(stored.values.size());
    std::vector<std::int64_t> index(r, 0);
    for (std::size_t i = 0; i < out.values.size(); ++i) {
        std::int64_t from = 0;
        for (std::size_t d = 0; d < r; ++d) from += index[d] * strides[perm[d]];
        out.values[i] = stored.values[static_cast<std::size_t>(from)];
        for (std::size_t d = r; d-- > 0;) {
            if (++index[d] < out.shape[d]) break;
            index[d] = 0;
        }
    }
    return out;
}

// numpy.matmul in double (1-D operands promoted and dropped), times alpha.
Operand referenceMatMul(Operand a, Operand b, double alpha) {
    const bool vectorA = a.shape.size() == 1, vectorB = b.shape.size() == 1;
    if (vectorA) a.shape.insert(a.shape.begin(), 1);
    if (vectorB) b.shape.push_back(1);
    const std::size_t r = std::max(a.shape.size(), b.shape.size());
    a.shape.insert(a.shape.begin(), r - a.shape.size(), 1);
    b.shape.insert(b.shape.begin(), r - b.shape.size(), 1);
    const std::int64_t M = a.shape[r - 2], K = a.shape[r - 1], N = b.shape[r - 1];
    EXPECT_EQ(K, b.shape[r - 2]);
    Shape batch;
    for (std::size_t d = 0; d + 2 < r; ++d) batch.push_back(std::max(a.shape[d], b.shape[d]));
    Operand y;
    y.shape = batch;
    if (!vectorA) y.shape.push_back(M);
    if (!vectorB) y.shape.push_back(N);
    std::vector<std::int64_t> index(batch.size(), 0);
    for (std::int64_t item = 0; item < count(batch); ++item) {
        std::int64_t offA = 0, offB = 0;
        for (std::size_t d = 0; d < batch.size(); ++d) {
            offA = offA * a.shape[d] + (a.shape[d] == 1 ? 0 : index[d]);
            offB = offB * b.shape[d] + (b.shape[d] == 1 ? 0 : index[d]);
        }
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                double sum = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    sum += a.values[static_cast<std::size_t>((offA * M + i) * K + k)] *
                           b.values[static_cast<std::size_t>((offB * K + k) * N + j)];
                y.values.push_back(alpha * sum);
            }
        for (std::size_t d = batch.size(); d-- > 0;) {
            if (++index[d] < batch[d]) break;
            index[d] = 0;
        }
    }
    return y;
}

struct MatMulCase {
    Shape a, b;
    bool transA, transB, batchA, batchB;
    float alpha;
};

OneNodeSpec fusedMatMulSpec(std::vector<Value> inputs, const MatMulCase& c) {
    OneNodeSpec spec = nodeSpec("FusedMatMul", 1, std::move(inputs), 1, kMs);
    spec.attributes = [=](onnx::NodeProto& n) {
        setAttr(n, "alpha", c.alpha);
        setAttr(n, "transA", std::int64_t{c.transA});
        setAttr(n, "transB", std::int64_t{c.transB});
        setAttr(n, "transBatchA", std::int64_t{c.batchA});
        setAttr(n, "transBatchB", std::int64_t{c.batchB});
    };
    return spec;
}

void checkFusedMatMul(const MatMulCase& c) {
    SCOPED_TRACE(shapeToString(c.a) + " x " + shapeToString(c.b) + (c.transA ? " transA" : "") +
                 (c.transB ? " transB" : "") + (c.batchA ? " transBatchA" : "") +
                 (c.batchB ? " transBatchB" : "") + " alpha " + std::to_string(c.alpha));
    const Operand a{wave(count(c.a), 0.3), c.a}, b{wave(count(c.b), 1.9), c.b};
    const Operand y =
        referenceMatMul(logical(a, c.batchA, c.transA), logical(b, c.batchB, c.transB), c.alpha);
    Tensor out = runOneNodeTensor(fusedMatMulSpec(
        {Value(tensorOf<float>(c.a, a.values)), Value(tensorOf<float>(c.b, b.values))}, c));
    ASSERT_EQ(out.shape(), y.shape);
    EXPECT_TRUE(tensorsClose(out, tensorOf<float>(y.shape, y.values), kTolerance));
    Tensor outDouble = runOneNodeTensor(fusedMatMulSpec(
        {Value(tensorOf<double>(c.a, a.values)), Value(tensorOf<double>(c.b, b.values))}, c));
    EXPECT_TRUE(tensorsClose(outDouble, tensorOf<double>(y.shape, y.values)));
}

TEST(MsFusedMatMul, TransposesAndAlphaOnMatricesMatchTheReference) {
    for (bool transA : {false, true})
        for (bool transB : {false, true}) {
            const Shape a = transA ? Shape{7, 5} : Shape{5, 7},
                        b = transB ? Shape{3, 7} : Shape{7, 3};
            checkFusedMatMul({a, b, transA, transB, false, false, 0.125f});
            checkFusedMatMul({a, b, transA, transB, false, false, 1.0f});
        }
}

TEST(MsFusedMatMul, BatchedBroadcastAndVectorOperandsMatchTheReference) {
    checkFusedMatMul({{2, 3, 5, 4}, {3, 6, 4}, false, true, false, false, -0.5f});
    checkFusedMatMul({{2, 1, 4, 5}, {3, 4, 6}, true, false, false, false, 2.0f});
    checkFusedMatMul({{4, 5}, {2, 3, 6, 4}, true, true, false, false, 0.3f});  // [5,4]x[...,4,6]
    // Vectors: transA / transB are ignored on a 1-D operand, as ONNX Runtime does.
    checkFusedMatMul({{7}, {7, 3}, true, false, false, false, 0.5f});
    checkFusedMatMul({{2, 5, 7}, {7}, false, true, false, false, 0.5f});
}

TEST(MsFusedMatMul, TransBatchMovesTheFirstDimBehindTheBatchDims) {
    // A stored [M, b, K] (BERT's attention before its Transpose), B [b, K, N].
    checkFusedMatMul({{5, 3, 4}, {3, 4, 6}, false, false, true, false, 1.0f});
    checkFusedMatMul({{4, 3, 5}, {6, 3, 4}, true, true, true, true, 0.25f});
    checkFusedMatMul({{5, 2, 3, 4}, {4, 2, 3, 6}, false, false, true, true, 0.7f});
    checkFusedMatMul({{5, 2, 1, 4}, {6, 2, 3, 4}, false, true, true, true, 1.5f});  // broadcast
}

TEST(MsFusedMatMul, ProblemsLargeEnoughForOneDnnMatchTheReference) {
    // BERT's attention scores (Q x K^T / sqrt(d) with the scale in alpha) at a small size, and a
    // transposed A over batches: the oneDNN path with the transposes in its strides.
    // (Each at least 64^3 multiply-adds per matrix, where DnnlMatMul takes over.)
    checkFusedMatMul({{2, 3, 64, 64}, {2, 3, 80, 64}, false, true, false, false, 0.125f});
    checkFusedMatMul({{2, 64, 72}, {2, 64, 80}, true, false, false, false, -1.5f});
    checkFusedMatMul({{2, 1, 64, 72}, {3, 80, 64}, true, true, false, false, 0.75f});
    checkFusedMatMul({{64, 80}, {96, 64}, true, true, false, false, 0.5f});
    checkFusedMatMul({{2, 70, 64}, {64, 66}, false, false, false, false, 3.0f});
    checkFusedMatMul({{2, 70, 64}, {66, 64}, false, true, false, false, 3.0f});
    checkFusedMatMul({{64, 2, 72}, {2, 80, 72}, false, true, true, false, 1.0f});
}

TEST(MsFusedMatMul, HostileShapesAndTypesAreRefusedNamingTheNode) {
    auto run = [](Shape a, Shape b, MatMulCase c) {
        return errorOf(fusedMatMulSpec({Value(tensorOf<float>(a, wave(count(a), 0))),
                                        Value(tensorOf<float>(b, wave(count(b), 0)))},
                                       c));
    };
    std::string m = run({3, 4}, {4, 5}, {{}, {}, false, false, true, false, 1});
    EXPECT_NE(m.find("transBatchA/transBatchB need A and B of one rank >= 3"), std::string::npos)
        << m;
    EXPECT_NE(m.find("FusedMatMul"), std::string::npos) << m;
    m = run({2, 3, 4}, {4, 5}, {{}, {}, false, false, false, true, 1});
    EXPECT_NE(m.find("of one rank >= 3"), std::string::npos) << m;
    m = run({3, 4}, {3, 5}, {{}, {}, false, true, false, false, 1});  // B^T is [5, 3]
    EXPECT_NE(m.find("inner dimensions differ"), std::string::npos) << m;
    m = run({2, 3, 4}, {3, 4, 5}, {{}, {}, false, false, false, false, 1});  // batch 2 vs 3
    EXPECT_NE(m, "(no error)");
    // (alpha 0.5: with alpha 1 and no transposes the optimizer makes it a MatMul, which takes
    // integers.)
    m = errorOf(fusedMatMulSpec({Value(makeTensor<std::int32_t>({1, 1}, {1})),
                                 Value(makeTensor<std::int32_t>({1, 1}, {2}))},
                                {{}, {}, false, false, false, false, 0.5f}));
    EXPECT_NE(m.find("floating-point tensors of one type"), std::string::npos) << m;
}

// ---- the optimizer on ONNX Runtime's FusedConv --------------------------------------------

TEST(MsFusedConv, TheOptimizerAdoptsItAndTheResultIsUnchanged) {
    // X -> FusedConv(Clip 0..6, constant W, B) -> Conv -> Add(X) : the ORT node becomes the
    // engine's FusedConv, so the residual Add fuses into the second convolution.
    const Shape xs{1, 8, 6, 5}, ws{8, 8, 3, 3};
    auto m = emptyModel(17);
    auto* ms = m.add_opset_import();
    ms->set_domain(kMs);
    ms->set_version(1);
    auto& g = *m.mutable_graph();
    g.set_name("g");
    addFloatInput(g, "x", xs);
    addInitializer(g, "w1", tensorOf<float>(ws, wave(count(ws), 0.1)));
    addInitializer(g, "b1", tensorOf<float>({8}, wave(8, 0.2)));
    addInitializer(g, "w2", tensorOf<float>(ws, wave(count(ws), 0.3)));
    auto* fused = addNode(g, "FusedConv", {"x", "w1", "b1"}, {"h"});
    fused->set_domain(kMs);
    setAttr(*fused, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    setAttr(*fused, "activation", std::string("Clip"));
    setAttr(*fused, "activation_params", std::vector<float>{0.0f, 6.0f});
    setAttr(*addNode(g, "Conv", {"h", "w2"}, {"c"}), "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    addNode(g, "Add", {"c", "x"}, {"y"});
    g.add_output()->set_name("y");

    auto optimized = m;
    engine::optimizeModel(optimized, {});
    int microsoft = 0;
    for (const auto& n : optimized.graph().node()) microsoft += n.domain() == kMs;
    EXPECT_EQ(microsoft, 0);
    EXPECT_EQ(opCounts(optimized).count("Add"), 0u);

    const Tensor x = tensorOf<float>(xs, wave(count(xs), 0.7));
    auto plain = compileForTest(m, false);
    auto fast = compileForTest(m, true);
    ASSERT_TRUE(plain && fast);
    auto expected = plain->run({{"x", Value(x)}});
    auto actual = fast->run({{"x", Value(x)}});
    ASSERT_TRUE(expected && actual);
    EXPECT_TRUE(tensorsClose(actual->at(0).tensor(), expected->at(0).tensor(), kTolerance));
}

TEST(MsFusedMatMul, TheOptimizerTurnsAPlainOneIntoMatMulAndPacksTheScaledOne) {
    // a x W (alpha 1: a MatMul, whose constant weights the optimizer then packs) and a x W^T
    // scaled by 0.3 (ONNX Runtime's node until the weights are packed, scale and transpose in).
    const std::int64_t K = 64, N = 80;
    auto m = emptyModel(17);
    auto* ms = m.add_opset_import();
    ms->set_domain(kMs);
    ms->set_version(1);
    auto& g = *m.mutable_graph();
    g.set_name("g");
    addFloatInput(g, "a", {3, 5, K});
    addInitializer(g, "w", tensorOf<float>({K, N}, wave(K * N, 0.4)));
    addInitializer(g, "wt", tensorOf<float>({N, K}, wave(K * N, 0.9)));
    auto* plainNode = addNode(g, "FusedMatMul", {"a", "w"}, {"p"});
    plainNode->set_domain(kMs);
    setAttr(*plainNode, "alpha", 1.0f);
    setAttr(*plainNode, "transB", std::int64_t{0});
    auto* scaled = addNode(g, "FusedMatMul", {"a", "wt"}, {"s"});
    scaled->set_domain(kMs);
    setAttr(*scaled, "alpha", 0.3f);
    setAttr(*scaled, "transB", std::int64_t{1});
    g.add_output()->set_name("p");
    g.add_output()->set_name("s");

    auto optimized = m;
    engine::OptimizerOptions only;
    only.passes = {"adopt-ort-fused-nodes"};
    const auto report = engine::optimizeModel(optimized, {}, only);
    ASSERT_EQ(report.passes.size(), 1u);
    EXPECT_EQ(report.passes[0].rewrites, 1);
    EXPECT_EQ(optimized.graph().node(0).op_type(), "MatMul");
    EXPECT_EQ(optimized.graph().node(0).domain(), "");
    EXPECT_EQ(optimized.graph().node(0).attribute_size(), 0);
    EXPECT_EQ(optimized.graph().node(1).domain(), kMs);

    // All passes: where the machine packs weights, both products read packed weights (the
    // scaled one's hold 0.3 * B^T).
    auto all = m;
    engine::optimizeModel(all, {});
    if (engine::preferredChannelBlock() != 0) {
        EXPECT_EQ(opCounts(all)["PackedMatMul"], 2);
        for (const auto& n : all.graph().node()) EXPECT_NE(n.domain(), kMs) << n.op_type();
    }

    const Tensor a = tensorOf<float>({3, 5, K}, wave(15 * K, 0.2));
    auto plain = compileForTest(m, false);
    auto fast = compileForTest(m, true);
    ASSERT_TRUE(plain && fast);
    auto expected = plain->run({{"a", Value(a)}});
    auto actual = fast->run({{"a", Value(a)}});
    ASSERT_TRUE(expected && actual);
    for (std::size_t i = 0; i < 2; ++i)
        EXPECT_TRUE(tensorsClose(actual->at(i).tensor(), expected->at(i).tensor(), kTolerance));
}

TEST(MsFusedMatMul, TheOptimizerFusesAMatMulIntoTheBiasGeluAfterIt) {
    // BERT's feed-forward as ONNX Runtime saves it: MatMul(a, W) -> BiasGelu(., bias). A second
    // MatMul whose output is also a graph output keeps its BiasGelu.
    const std::int64_t K = 64, N = 72;
    auto m = emptyModel(17);
    auto* ms = m.add_opset_import();
    ms->set_domain(kMs);
    ms->set_version(1);
    auto& g = *m.mutable_graph();
    g.set_name("g");
    addFloatInput(g, "a", {2, 5, K});
    addInitializer(g, "w", tensorOf<float>({K, N}, wave(K * N, 0.4)));
    addInitializer(g, "bias", tensorOf<float>({N}, wave(N, 1.4)));
    addNode(g, "MatMul", {"a", "w"}, {"h"});
    addNode(g, "BiasGelu", {"h", "bias"}, {"y"})->set_domain(kMs);
    addNode(g, "MatMul", {"a", "w"}, {"h2"});
    addNode(g, "BiasGelu", {"h2", "bias"}, {"y2"})->set_domain(kMs);
    for (const char* name : {"y", "y2", "h2"}) g.add_output()->set_name(name);

    auto optimized = m;
    engine::OptimizerOptions only;
    only.passes = {"adopt-ort-fused-nodes"};
    engine::optimizeModel(optimized, {}, only);
    ASSERT_EQ(optimized.graph().node_size(), 3);
    const auto& fused = optimized.graph().node(0);
    EXPECT_EQ(fused.op_type(), "FusedMatMul");
    EXPECT_EQ(fused.domain(), engine::kOnnxlensDomain);
    EXPECT_EQ((std::vector<std::string>(fused.input().begin(), fused.input().end())),
              (std::vector<std::string>{"a", "w", "bias"}));
    EXPECT_EQ(fused.output(0), "y");
    EXPECT_EQ(optimized.graph().node(2).op_type(), "BiasGelu");

    const Tensor a = tensorOf<float>({2, 5, K}, wave(10 * K, 0.2));
    auto plain = compileForTest(m, false);
    auto fast = compileForTest(m, true);
    ASSERT_TRUE(plain && fast);
    auto expected = plain->run({{"a", Value(a)}});
    auto actual = fast->run({{"a", Value(a)}});
    ASSERT_TRUE(expected && actual);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(tensorsClose(actual->at(i).tensor(), expected->at(i).tensor(), kTolerance));
}

}  // namespace
}  // namespace onnxlens::testing
