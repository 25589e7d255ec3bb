// com.onnxlens PackedMatMul and the pack-matmul-weights pass: the packed weight layout, the
// kernel against the plain FusedMatMul on the same operands (odd sizes that leave partial
// blocks, a 1-D A, many rows), and optimized against unoptimized runs of models the pass rewrites.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "../../engine/ops/DnnlPackedMatMul.h"
#include "../../engine/ops/PackedMatMulWeights.h"
#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

Tensor waves(Shape shape, float phase) {
    std::vector<float> v(static_cast<std::size_t>(engine::shapeElementCount(shape)));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = std::sin(0.37f * static_cast<float>(i) + phase) * 0.5f;
    return Tensor::fromVector<float>(std::move(shape), v);
}

// One node of `op` (com.onnxlens) on A, B and an optional bias, with k/n/activation attributes.
Tensor runProduct(const std::string& op, const Tensor& a, const Tensor& b, const Tensor* bias,
                  const std::string& activation, std::int64_t k, std::int64_t n) {
    OneNodeSpec spec;
    spec.opType = op;
    spec.domain = engine::kOnnxlensDomain;
    spec.opset = 1;
    spec.inputs = {Value(a), Value(b)};
    if (bias) spec.inputs.push_back(Value(*bias));
    spec.attributes = [&](onnx::NodeProto& node) {
        if (!activation.empty()) setAttr(node, "activation", activation);
        if (op == "PackedMatMul") {
            setAttr(node, "k", k);
            setAttr(node, "n", n);
        }
    };
    return runOneNodeTensor(spec);
}

std::vector<Value> runModel(const onnx::ModelProto& model, bool optimize,
                            onnx::ModelProto* optimized = nullptr) {
    LoadedModel loaded;
    loaded.path = "packed-matmul-test.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions options;
    options.optimize = optimize;
    auto session = engine::Session::create(loaded, options);
    EXPECT_TRUE(session) << (session ? "" : session.error().message);
    if (!session) return {};
    if (optimized) *optimized = (*session)->optimizedModel();
    auto feeds = engine::prepareFeeds((*session)->inputs(), {}, {}, 11);
    EXPECT_TRUE(feeds);
    auto result = (*session)->run(*feeds);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : std::vector<Value>{};
}

// The optimized run of `model` (its graph left in `optimized`) computes what the unoptimized one
// does.
void expectOptimizedRunAgrees(const onnx::ModelProto& model, onnx::ModelProto& optimized) {
    const auto actual = runModel(model, true, &optimized);
    const auto expected = runModel(model, false);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_TRUE(tensorsClose(actual[i].tensor(), expected[i].tensor(), {1e-4, 1e-5}))
            << "output " << i;
}

// y [rows, n] against a [rows, k] x b [k, n] (+ bias), summed in double; names the first element
// further off than `tolerance`.
::testing::AssertionResult productIsClose(const std::vector<float>& y, const Tensor& a,
                                          const Tensor& b, const float* bias, std::int64_t rows,
                                          double tolerance) {
    const std::int64_t k = b.dim(0), n = b.dim(1);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = bias ? bias[j] : 0.0;
            for (std::int64_t i = 0; i < k; ++i)
                sum += static_cast<double>(a.data<float>()[r * k + i]) * b.data<float>()[i * n + j];
            const float got = y[static_cast<std::size_t>(r * n + j)];
            if (std::fabs(got - sum) > tolerance)
                return ::testing::AssertionFailure()
                       << "row " << r << ", column " << j << ": " << got << " against " << sum;
        }
    return ::testing::AssertionSuccess();
}

}  // namespace

// Every packed layout: oneDNN's OIw8i8o and OIw16i16o, and the Owi16o ... Owi64o of its brgemm
// kernels (AVX-512).
const std::vector<engine::ops::PackedMatMulBlocks> kEveryLayout{{8, 8},  {16, 16}, {1, 16},
                                                                {1, 32}, {1, 48},  {1, 64}};

std::string layoutName(engine::ops::PackedMatMulBlocks blocks) {
    return std::to_string(blocks.k) + " x " + std::to_string(blocks.n) + " blocks";
}

TEST(PackedMatMul, PackedLayoutHoldsEachWeightInItsBlockAndZeroPadding) {
    const std::int64_t k = 19, n = 11;
    const Tensor b = waves({k, n}, 0.3f);
    for (const auto blocks : kEveryLayout) {
        SCOPED_TRACE(layoutName(blocks));
        const std::int64_t bk = blocks.k, bn = blocks.n;
        const Tensor packed = engine::ops::packMatMulWeights(b, blocks);
        const std::int64_t kBlocks = (k + bk - 1) / bk;
        EXPECT_EQ(packed.shape(), engine::ops::packedMatMulWeightShape(k, n, blocks));
        EXPECT_EQ(engine::ops::packedMatMulBlocksOf(packed.shape(), k, n), blocks);
        const float* p = packed.data<float>();
        for (std::int64_t nb = 0; nb * bn < n; ++nb)
            for (std::int64_t kb = 0; kb < kBlocks; ++kb)
                for (std::int64_t i = 0; i < bk; ++i)
                    for (std::int64_t j = 0; j < bn; ++j) {
                        const std::int64_t row = kb * bk + i, col = nb * bn + j;
                        const float expected =
                            row < k && col < n ? b.data<float>()[row * n + col] : 0.0f;
                        ASSERT_EQ(p[((nb * kBlocks + kb) * bk + i) * bn + j], expected);
                    }
        EXPECT_TRUE(tensorsClose(engine::ops::unpackMatMulWeights(packed, k, n), b, {0.0, 0.0}));
    }
    // Blocks no oneDNN kernel reads, and shapes that do not hold K x N, are refused.
    EXPECT_FALSE(engine::ops::packedMatMulBlocksOf({2, 19, 1, 8}, k, n));
    EXPECT_FALSE(engine::ops::packedMatMulBlocksOf({2, 2, 16, 8}, k, n));
    EXPECT_FALSE(engine::ops::packedMatMulBlocksOf({1, 20, 1, 16}, k, n));
    EXPECT_THROW(engine::ops::packMatMulWeights(b, {4, 4}), engine::EngineError);
}

// The layout the optimizer packs in is one the kernels read, whatever this processor prefers.
TEST(PackedMatMul, PreferredBlocksAreAPackedLayout) {
    for (const auto& [k, n] : {std::pair<std::int64_t, std::int64_t>{768, 3072},
                               {3072, 768},
                               {100, 37},
                               {64, 64},
                               {4096, 11008}})
        for (std::int64_t fallback : {8, 16}) {
            const auto blocks = engine::ops::preferredPackedMatMulBlocks(k, n, fallback);
            EXPECT_TRUE(engine::ops::isPackedMatMulLayout(blocks))
                << k << " x " << n << ": " << layoutName(blocks);
        }
}

TEST(PackedMatMul, KernelComputesWhatFusedMatMulComputes) {
    struct Case {
        Shape a;
        std::int64_t n;
        bool bias;
        std::string activation;
    };
    // K = 70 and N = 37 leave partial blocks; 1-D A; a batch of rows; one row.
    const std::vector<Case> cases{{{2, 5, 70}, 37, true, "Gelu"},
                                  {{70}, 37, false, ""},
                                  {{3, 70}, 37, true, ""},
                                  {{1, 96}, 128, true, "Gelu"},
                                  {{300, 64}, 72, false, "Gelu"}};
    for (const auto& c : cases) {
        const std::int64_t k = c.a.back();
        SCOPED_TRACE(engine::shapeToString(c.a) + " x [" + std::to_string(k) + ", " +
                     std::to_string(c.n) + "] " + c.activation);
        const Tensor a = waves(c.a, 0.1f), b = waves({k, c.n}, 0.7f), bias = waves({c.n}, 1.3f);
        const Tensor expected =
            runProduct("FusedMatMul", a, b, c.bias ? &bias : nullptr, c.activation, k, c.n);
        for (const auto blocks : kEveryLayout) {
            SCOPED_TRACE(layoutName(blocks));
            const Tensor actual =
                runProduct("PackedMatMul", a, engine::ops::packMatMulWeights(b, blocks),
                           c.bias ? &bias : nullptr, c.activation, k, c.n);
            EXPECT_TRUE(tensorsClose(actual, expected, {1e-5, 1e-5}));
        }
    }
}

// A product of few rows is split by output columns over the threads (one row: a decode step):
// at 2 and 3 threads, with slices of unequal width and a partial last block, bias and GELU, the
// same figures as the plain product at one thread.
TEST(PackedMatMul, FewRowsSplitByColumnsOverThreadsComputeThePlainProduct) {
    struct Case {
        Shape a;
        std::int64_t n;
        bool bias;
        std::string activation;
    };
    const std::vector<Case> cases{{{1, 256}, 1003, true, "Gelu"},
                                  {{256}, 517, false, ""},
                                  {{3, 200}, 777, true, ""},
                                  {{2, 1, 384}, 1536, false, "Gelu"}};
    for (const auto& c : cases) {
        const std::int64_t k = c.a.back();
        SCOPED_TRACE(engine::shapeToString(c.a) + " x [" + std::to_string(k) + ", " +
                     std::to_string(c.n) + "] " + c.activation);
        const Tensor a = waves(c.a, 0.2f), b = waves({k, c.n}, 0.9f), bias = waves({c.n}, 1.1f);
        const Tensor expected =
            runProduct("FusedMatMul", a, b, c.bias ? &bias : nullptr, c.activation, k, c.n);
        for (const auto blocks : kEveryLayout)
            for (int threads : {2, 3}) {
                SCOPED_TRACE(layoutName(blocks) + ", " + std::to_string(threads) + " threads");
                OneNodeSpec spec;
                spec.opType = "PackedMatMul";
                spec.domain = engine::kOnnxlensDomain;
                spec.opset = 1;
                spec.inputs = {Value(a), Value(engine::ops::packMatMulWeights(b, blocks))};
                if (c.bias) spec.inputs.push_back(Value(bias));
                spec.attributes = [&](onnx::NodeProto& node) {
                    if (!c.activation.empty()) setAttr(node, "activation", c.activation);
                    setAttr(node, "k", k);
                    setAttr(node, "n", c.n);
                };
                auto outputs = runOneNode(spec, threads);
                ASSERT_TRUE(outputs) << outputs.error().message;
                EXPECT_TRUE(tensorsClose((*outputs)[0].tensor(), expected, {1e-5, 1e-5}));
            }
    }
}

// One row (a classifier's Gemm, a decode step) at thread counts where oneDNN 2.6's brgemm kernel
// does not take the layout the optimizer packed in: oneDNN then offers its reference code, 270x
// slower (ResNet-50's classifier: 82 ms instead of 0.3). The product must come from a jit kernel
// (the packed layout, else the one oneDNN prefers) or from the caller's own, never from `ref`.
TEST(PackedMatMul, FewRowsAtManyThreadsNeverRunOneDnnsReferenceKernel) {
    for (const auto& [k, n] : {std::pair<std::int64_t, std::int64_t>{1280, 1000}, {2048, 1000}}) {
        const auto blocks = engine::ops::preferredPackedMatMulBlocks(k, n, 16);
        const Tensor a = waves({1, k}, 0.2f), b = waves({k, n}, 0.9f), bias = waves({n}, 1.1f);
        const Tensor packed = engine::ops::packMatMulWeights(b, blocks);
        std::vector<double> expected(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = bias.data<float>()[j];
            for (std::int64_t i = 0; i < k; ++i)
                sum += static_cast<double>(a.data<float>()[i]) * b.data<float>()[i * n + j];
            expected[static_cast<std::size_t>(j)] = sum;
        }
        for (int threads : {1, 2, 4, 8, 16}) {
            SCOPED_TRACE(std::to_string(k) + " x " + std::to_string(n) + ", " + layoutName(blocks) +
                         ", " + std::to_string(threads) + " threads");
            engine::ThreadPool pool(threads);
            engine::ops::DnnlPackedMatMul product;
            std::vector<float> y(static_cast<std::size_t>(n), -1.0f);
            if (!product.run(a.data<float>(), 1, k, n, packed, bias.data<float>(),
                             engine::ops::MatMulActivation::None, y.data(), &pool)) {
                EXPECT_TRUE(product.lastImplementations().empty());  // the caller computes it
                continue;
            }
            const auto kernels = product.lastImplementations();
            ASSERT_FALSE(kernels.empty());
            for (const std::string& kernel : kernels) EXPECT_FALSE(kernel.starts_with("ref"));
            for (std::int64_t j = 0; j < n; ++j)
                ASSERT_NEAR(y[static_cast<std::size_t>(j)], expected[static_cast<std::size_t>(j)],
                            1e-4)
                    << "column " << j;
        }
    }
}

// One product object kept across calls (as a node's kernel is across runs) keeps its oneDNN
// argument memories and points them at each call's buffers (DnnlCallArgs.h): every call reads its
// own A, bias and weights and writes its own Y, also when the buffers come back in turn.
TEST(PackedMatMul, KeptProductReadsAndWritesEachCallsBuffers) {
    constexpr std::int64_t rows = 16, k = 96, n = 80;
    const auto blocks = engine::ops::preferredPackedMatMulBlocks(k, n, 16);
    const Tensor b1 = waves({k, n}, 0.9f), b2 = waves({k, n}, 2.3f), bias = waves({n}, 1.1f);
    const Tensor packed1 = engine::ops::packMatMulWeights(b1, blocks);
    const Tensor packed2 = engine::ops::packMatMulWeights(b2, blocks);
    const std::vector<Tensor> as{waves({rows, k}, 0.2f), waves({rows, k}, 0.7f)};
    engine::ops::DnnlPackedMatMul product;
    std::vector<std::vector<float>> ys(2, std::vector<float>(rows * n));
    for (int call = 0; call < 6; ++call) {
        SCOPED_TRACE("call " + std::to_string(call));
        const Tensor& a = as[static_cast<std::size_t>(call % 2)];
        const bool secondWeights = call >= 3;
        const Tensor& b = secondWeights ? b2 : b1;
        std::vector<float>& y = ys[static_cast<std::size_t>((call / 2) % 2)];
        std::fill(y.begin(), y.end(), -7.0f);
        const float* biasData = call == 5 ? nullptr : bias.data<float>();
        if (!product.run(a.data<float>(), rows, k, n, secondWeights ? packed2 : packed1, biasData,
                         engine::ops::MatMulActivation::None, y.data()))
            GTEST_SKIP() << "no oneDNN kernel for these products in this build";
        ASSERT_TRUE(productIsClose(y, a, b, biasData, rows, 1e-4));
    }
}

// The column slices keep their oneDNN arguments from call to call, one set per slice (slices of
// one width share a primitive and run at once): calls of 1 and 3 rows (other primitives),
// alternating A, Y and bias, each checked against a double-precision sum.
TEST(PackedMatMul, KeptColumnSlicesReadAndWriteEachCallsBuffers) {
    constexpr std::int64_t k = 256, n = 1003;
    const auto blocks = engine::ops::preferredPackedMatMulBlocks(k, n, 16);
    const Tensor b = waves({k, n}, 0.9f), bias = waves({n}, 1.1f);
    const Tensor packed = engine::ops::packMatMulWeights(b, blocks);
    const std::vector<Tensor> as{waves({3, k}, 0.2f), waves({3, k}, 0.7f)};
    for (int threads : {2, 3}) {
        engine::ThreadPool pool(threads);
        engine::ops::DnnlPackedMatMul product;
        std::vector<std::vector<float>> ys(2, std::vector<float>(3 * n));
        bool sliced = false;
        for (int call = 0; call < 8; ++call) {
            SCOPED_TRACE(std::to_string(threads) + " threads, call " + std::to_string(call));
            const std::int64_t rows = call % 3 == 2 ? 3 : 1;
            const Tensor& a = as[static_cast<std::size_t>(call % 2)];
            std::vector<float>& y = ys[static_cast<std::size_t>((call / 2) % 2)];
            std::fill(y.begin(), y.end(), -7.0f);
            const float* biasData = call >= 5 ? nullptr : bias.data<float>();
            if (!product.run(a.data<float>(), rows, k, n, packed, biasData,
                             engine::ops::MatMulActivation::None, y.data(), &pool))
                GTEST_SKIP() << "no oneDNN kernel for these products in this build";
            sliced = sliced || product.lastImplementations().size() >= 2;
            ASSERT_TRUE(productIsClose(y, a, b, biasData, rows, 1e-3));
        }
        // oneDNN's SSE4.1 kernels (an x86-64-v2 processor) have no jit kernel for the slices: the
        // products above were then whole ones, checked all the same.
        if (!sliced) GTEST_SKIP() << "no column split at " << threads << " threads on this CPU";
    }
}

TEST(PackedMatMul, KernelRefusesWeightsThatDoNotHoldKAndN) {
    OneNodeSpec spec;
    spec.opType = "PackedMatMul";
    spec.domain = engine::kOnnxlensDomain;
    spec.opset = 1;
    spec.inputs = {Value(waves({2, 16}, 0)), Value(waves({2, 2, 8, 8}, 0))};
    spec.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "k", std::int64_t{16});
        setAttr(node, "n", std::int64_t{40});  // 5 blocks of N, the weights hold 2
    };
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("do not hold"), std::string::npos)
        << result.error().message;
}

TEST(PackedMatMul, PassPacksConstantWeightsOnceAndOptimizedRunsAgree) {
    if (engine::preferredChannelBlock() == 0) GTEST_SKIP() << "no blocked kernels on this build";
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 16, 96});
    addInitializer(g, "w", waves({96, 200}, 0.2f));
    addInitializer(g, "bias", waves({200}, 0.5f));
    addInitializer(g, "w2", waves({200, 72}, 0.9f));
    addInitializer(g, "small", waves({72, 8}, 1.1f));  // below the packing size: stays plain
    addNode(g, "MatMul", {"x", "w"}, {"h"});
    addNode(g, "Add", {"h", "bias"}, {"hb"});   // -> FusedMatMul, then packed
    addNode(g, "MatMul", {"hb", "w2"}, {"y"});  // packed
    addNode(g, "MatMul", {"x", "w"}, {"y2"});   // shares the packed copy of w
    addNode(g, "MatMul", {"y", "small"}, {"y3"});
    addNode(g, "Transpose", {"w2"}, {"w2t"});  // another reader: w2's plain copy stays
    for (const char* out : {"y", "y2", "y3", "w2t"}) g.add_output()->set_name(out);
    onnx::ModelProto optimized;
    expectOptimizedRunAgrees(m, optimized);
    auto counts = opCounts(optimized);
    EXPECT_EQ(counts["PackedMatMul"], 3);
    EXPECT_EQ(counts["MatMul"], 1);
    std::map<std::string, int> initializers;
    for (const auto& init : optimized.graph().initializer()) initializers[init.name()]++;
    EXPECT_EQ(initializers.count("w"), 0u);  // every reader packed: the plain weights are gone
    EXPECT_EQ(initializers.count("w/packed"), 1u);
    EXPECT_EQ(initializers.count("w2"), 1u);
    EXPECT_EQ(initializers.count("w2/packed"), 1u);
    EXPECT_EQ(initializers.count("small"), 1u);
    for (const auto& n : optimized.graph().node()) {
        if (n.op_type() == "PackedMatMul") {
            EXPECT_EQ(n.domain(), engine::kOnnxlensDomain);
        }
    }
}

// Gemm with constant weights (a CNN's classifier: transB, a bias row, alpha) is packed: alpha
// and the transposition go into the packed copy, C becomes the bias. The Gemms it cannot express
// (A transposed, beta other than 1, a C that is not a row of N) stay Gemm and agree too.
TEST(PackedMatMul, PassPacksGemmWeightsAndOptimizedRunsAgree) {
    if (engine::preferredChannelBlock() == 0) GTEST_SKIP() << "no blocked kernels on this build";
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {3, 96});
    addInitializer(g, "wt", waves({130, 96}, 0.2f));  // [N, K]: read transposed
    addInitializer(g, "w", waves({96, 130}, 0.4f));
    addInitializer(g, "c", waves({130}, 0.5f));
    addInitializer(g, "cm", waves({3, 130}, 0.7f));
    auto* fc = addNode(g, "Gemm", {"x", "wt", "c"}, {"fc"});  // packed
    setAttr(*fc, "transB", std::int64_t{1});
    setAttr(*fc, "alpha", 0.5f);
    addNode(g, "Gemm", {"x", "w"}, {"noc"});  // packed, no C
    auto* beta = addNode(g, "Gemm", {"x", "w", "c"}, {"beta"});
    setAttr(*beta, "beta", 2.0f);                            // stays
    addNode(g, "Gemm", {"x", "w", "cm"}, {"fullc"});         // stays: C is [M, N]
    auto* ta = addNode(g, "Gemm", {"xt", "w"}, {"transa"});  // stays: A transposed
    setAttr(*ta, "transA", std::int64_t{1});
    addNode(g, "Transpose", {"x"}, {"xt"});
    std::swap(*g.mutable_node(4), *g.mutable_node(5));  // xt before its reader
    for (const char* out : {"fc", "noc", "beta", "fullc", "transa"}) g.add_output()->set_name(out);
    onnx::ModelProto optimized;
    expectOptimizedRunAgrees(m, optimized);
    std::map<std::string, std::string> producer;
    for (const auto& n : optimized.graph().node()) producer[n.output(0)] = n.op_type();
    EXPECT_EQ(producer["fc"], "PackedMatMul");
    EXPECT_EQ(producer["noc"], "PackedMatMul");
    EXPECT_EQ(producer["beta"], "Gemm");
    EXPECT_EQ(producer["fullc"], "Gemm");
    EXPECT_EQ(producer["transa"], "Gemm");
}

// ONNX Runtime's com.microsoft Attention (the transformer optimizer's) gets its QKV weights
// packed: the com.onnxlens Attention of the same inputs and attributes computes what the
// com.microsoft one computes, with a 2-D mask, a bias and Q, K and V of unequal widths.
TEST(PackedMatMul, PassPacksAttentionWeightsAndOptimizedRunsAgree) {
    if (engine::preferredChannelBlock() == 0) GTEST_SKIP() << "no blocked kernels on this build";
    for (bool unequal : {false, true}) {
        SCOPED_TRACE(unequal ? "qkv_hidden_sizes 64, 64, 96" : "equal widths");
        const std::int64_t width = unequal ? 64 + 64 + 96 : 3 * 64;
        auto m = emptyModel();
        m.add_opset_import()->set_domain("com.microsoft");
        m.mutable_opset_import(1)->set_version(1);
        auto& g = *m.mutable_graph();
        addFloatInput(g, "x", {2, 7, 80});
        auto* mask = g.add_input();
        mask->set_name("mask");
        auto* maskType = mask->mutable_type()->mutable_tensor_type();
        maskType->set_elem_type(onnx::TensorProto::INT32);
        for (int d : {2, 7}) maskType->mutable_shape()->add_dim()->set_dim_value(d);
        addInitializer(g, "w", waves({80, width}, 0.4f));
        addInitializer(g, "b", waves({width}, 0.8f));
        auto* node = addNode(g, "Attention", {"x", "w", "b", "mask"}, {"y"});
        node->set_domain("com.microsoft");
        setAttr(*node, "num_heads", std::int64_t{4});
        if (unequal) setAttr(*node, "qkv_hidden_sizes", std::vector<std::int64_t>{64, 64, 96});
        g.add_output()->set_name("y");
        onnx::ModelProto optimized;
        const auto actual = runModel(m, true, &optimized);
        const auto expected = runModel(m, false);
        ASSERT_EQ(actual.size(), 1u);
        ASSERT_EQ(expected.size(), 1u);
        EXPECT_TRUE(tensorsClose(actual[0].tensor(), expected[0].tensor(), {1e-4, 1e-5}));
        int packed = 0;
        for (const auto& n : optimized.graph().node())
            if (n.op_type() == "Attention") {
                EXPECT_EQ(n.domain(), engine::kOnnxlensDomain);
                ++packed;
            }
        EXPECT_EQ(packed, 1);
        for (const auto& init : optimized.graph().initializer()) {
            if (init.name() == "w/packed") {
                EXPECT_EQ(init.dims_size(), 4);
            }
        }
    }
}

// A saved optimized model (onnxlens-cli optimize) is shaped and checked through its com.onnxlens
// nodes: PackedMatMul (from a MatMul and from a MatMul + Add), the packed Attention with unequal
// Q, K and V widths; every output has the shape the plain model gives it.
TEST(PackedMatMul, SavedOptimizedModelIsShapedAndCheckedThroughItsOwnOperators) {
    if (engine::preferredChannelBlock() == 0) GTEST_SKIP() << "no blocked kernels on this build";
    auto m = emptyModel();
    m.add_opset_import()->set_domain("com.microsoft");
    m.mutable_opset_import(1)->set_version(1);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 7, 80});
    addInitializer(g, "w", waves({80, 200}, 0.2f));
    addInitializer(g, "bias", waves({200}, 0.5f));
    addInitializer(g, "w2", waves({200, 80}, 0.9f));
    addInitializer(g, "wa", waves({80, 64 + 64 + 96}, 0.4f));
    addInitializer(g, "ba", waves({64 + 64 + 96}, 0.8f));
    addNode(g, "MatMul", {"x", "w"}, {"h"});
    addNode(g, "Add", {"h", "bias"}, {"hb"});
    addNode(g, "MatMul", {"hb", "w2"}, {"y"});
    auto* attention = addNode(g, "Attention", {"y", "wa", "ba"}, {"a"});
    attention->set_domain("com.microsoft");
    setAttr(*attention, "num_heads", std::int64_t{4});
    setAttr(*attention, "qkv_hidden_sizes", std::vector<std::int64_t>{64, 64, 96});
    for (const char* out : {"hb", "y", "a"}) g.add_output()->set_name(out);
    onnx::ModelProto optimized;
    expectOptimizedRunAgrees(m, optimized);
    auto counts = opCounts(optimized);
    ASSERT_EQ(counts["PackedMatMul"], 2);
    ASSERT_EQ(counts["Attention"], 1);
    for (auto& output : *optimized.mutable_graph()->mutable_output()) output.clear_type();
    optimized.mutable_graph()->clear_value_info();
    EXPECT_TRUE(checkNodesAgainstSchemas(optimized));
    const auto shapes = inferShapes(optimized);
    const std::map<std::string, std::vector<std::int64_t>> expected{
        {"hb", {2, 7, 200}}, {"y", {2, 7, 80}}, {"a", {2, 7, 96}}};
    for (const auto& [name, dims] : expected) {
        SCOPED_TRACE(name);
        const auto inferred = shapes->staticDimsOf(name);
        ASSERT_TRUE(inferred.has_value());
        EXPECT_EQ(*inferred, dims);
    }
}

TEST(PackedMatMul, PackedWeightsAreUsedInPlaceWithoutASecondCopy) {
    // oneDNN may prefer another weights layout (its brgemm kernels on AVX-512); the engine asks
    // for a kernel that reads the packed one first, so no packed weight is copied again.
    if (engine::preferredChannelBlock() == 0) GTEST_SKIP() << "no blocked kernels on this build";
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 16, 384});
    addInitializer(g, "w", waves({384, 384}, 0.3f));
    addNode(g, "MatMul", {"x", "w"}, {"y"});
    g.add_output()->set_name("y");
    auto session = compileForTest(m, true);
    ASSERT_TRUE(session);
    auto feeds = engine::prepareFeeds(session->inputs(), {}, {}, 3);
    ASSERT_TRUE(feeds);
    ASSERT_TRUE(session->run(*feeds));
    EXPECT_EQ(session->weightMemory().reorderedBytes, 0u);
}
