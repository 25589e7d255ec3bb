// The run-time choice of the kernels' instruction set (CpuIsa.h): the dispatch picks an ISA this
// CPU runs, and every per-ISA object this build has (and this CPU runs) computes what the
// baseline's kernels compute, on sizes around the vector widths (tails of 4, 8 and 16 lanes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "onnxlens/engine/CpuIsa.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "ops/NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

using engine::CpuIsa;
using engine::KernelRegistry;

Tensor randomFloats(Shape shape, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<float> values(static_cast<std::size_t>(n));
    for (float& v : values) v = dist(rng);
    return floats(std::move(shape), std::move(values));
}

template <class T>
Tensor randomIntegers(Shape shape, unsigned seed, int lo, int hi) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<T> values(static_cast<std::size_t>(n));
    for (T& v : values) v = static_cast<T>(dist(rng));
    return makeTensor<T>(std::move(shape), std::move(values));
}

// Runs the spec's node with the kernel `registry` resolves (no session: the global registry is
// the dispatched one, and these tests compare registries).
std::vector<Value> runWith(const KernelRegistry& registry, const OneNodeSpec& spec) {
    const onnx::ModelProto model = buildOneNodeModel(spec);
    const engine::KernelFactory* factory = registry.find(spec.domain, spec.opType, spec.opset);
    if (!factory) {
        ADD_FAILURE() << "no kernel for " << spec.opType;
        return {};
    }
    engine::NodeInfo info(model.graph().node(0), spec.opset, {});
    auto kernel = (*factory)(info);
    engine::ThreadPool pool(1);
    engine::KernelContext context(pool, nullptr, nullptr);
    std::vector<const Value*> inputs;
    for (const Value& v : spec.inputs) inputs.push_back(v.isNone() ? nullptr : &v);
    std::vector<Value> outputs(static_cast<std::size_t>(spec.outputCount));
    kernel->run(context, inputs, outputs);
    return outputs;
}

// The cases: the hot kernels of the dispatched families, at sizes that leave vector tails.
std::vector<std::pair<std::string, OneNodeSpec>> dispatchCases() {
    std::vector<std::pair<std::string, OneNodeSpec>> cases;
    unsigned seed = 1;
    for (std::int64_t n : {1, 7, 8, 9, 17, 33, 100}) {
        const std::string size = std::to_string(n);
        cases.push_back(
            {"Add broadcast " + size,
             nodeSpec("Add", 17, {randomFloats({3, n}, seed++), randomFloats({1, n}, seed++)})});
        cases.push_back(
            {"Mul " + size,
             nodeSpec("Mul", 17, {randomFloats({2, n}, seed++), randomFloats({2, n}, seed++)})});
        for (const char* op : {"Exp", "Tanh", "Sigmoid", "Erf", "Sqrt", "Relu", "HardSwish"}) {
            Tensor x = std::string(op) == "Sqrt" ? randomFloats({2, n}, seed++, 0.0f, 4.0f)
                                                 : randomFloats({2, n}, seed++, -6.0f, 6.0f);
            cases.push_back({std::string(op) + " " + size, nodeSpec(op, 17, {x})});
        }
        cases.push_back(
            {"Softmax " + size, nodeSpec("Softmax", 13, {randomFloats({3, n}, seed++)})});
        OneNodeSpec layerNorm = nodeSpec(
            "LayerNormalization", 17,
            {randomFloats({4, n}, seed++), randomFloats({n}, seed++), randomFloats({n}, seed++)});
        cases.push_back({"LayerNormalization " + size, layerNorm});
        cases.push_back({"ReduceMean " + size, nodeSpec("ReduceMean", 18,
                                                        {randomFloats({3, n}, seed++),
                                                         makeTensor<std::int64_t>({1}, {1})})});
        cases.push_back(
            {"MatMul 5x" + size + "x3",
             nodeSpec("MatMul", 13, {randomFloats({5, n}, seed++), randomFloats({n, 3}, seed++)})});
        cases.push_back(
            {"MatMul batched 2x3x" + size + "x" + size,
             nodeSpec("MatMul", 13,
                      {randomFloats({2, 3, n}, seed++), randomFloats({2, n, n}, seed++)})});
        OneNodeSpec gemm = nodeSpec("Gemm", 13,
                                    {randomFloats({4, n}, seed++), randomFloats({6, n}, seed++),
                                     randomFloats({6}, seed++)});
        gemm.attributes = [](onnx::NodeProto& node) { setAttr(node, "transB", std::int64_t{1}); };
        cases.push_back({"Gemm " + size, gemm});
        cases.push_back(
            {"MatMulInteger " + size,
             nodeSpec("MatMulInteger", 10,
                      {randomIntegers<std::uint8_t>({4, n}, seed++, 0, 255),
                       randomIntegers<std::int8_t>({n, 5}, seed++, -128, 127),
                       makeTensor<std::uint8_t>({}, {131}), makeTensor<std::int8_t>({}, {-3})})});
        cases.push_back({"DynamicQuantizeMatMul " + size,
                         nodeSpec("DynamicQuantizeMatMul", 1,
                                  {randomFloats({3, n}, seed++),
                                   randomIntegers<std::int8_t>({n, 6}, seed++, -128, 127),
                                   floats({1}, {0.02f}), Value(), randomFloats({6}, seed++)},
                                  1, "com.microsoft")});
    }
    // Pooling and convolution (the Eigen and direct paths beside oneDNN's).
    OneNodeSpec maxPool = nodeSpec("MaxPool", 12, {randomFloats({1, 3, 11, 13}, seed++)});
    maxPool.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "kernel_shape", std::vector<std::int64_t>{3, 3});
        setAttr(node, "strides", std::vector<std::int64_t>{2, 2});
    };
    cases.push_back({"MaxPool", maxPool});
    OneNodeSpec averagePool = nodeSpec("AveragePool", 11, {randomFloats({1, 5, 9, 9}, seed++)});
    averagePool.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "kernel_shape", std::vector<std::int64_t>{2, 2});
    };
    cases.push_back({"AveragePool", averagePool});
    OneNodeSpec conv = nodeSpec("Conv", 11,
                                {randomFloats({1, 3, 9, 11}, seed++),
                                 randomFloats({4, 3, 3, 3}, seed++), randomFloats({4}, seed++)});
    conv.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    };
    cases.push_back({"Conv", conv});
    OneNodeSpec conv1d =
        nodeSpec("Conv", 11, {randomFloats({1, 2, 300}, seed++), randomFloats({6, 2, 64}, seed++)});
    conv1d.attributes = [](onnx::NodeProto& node) {
        setAttr(node, "strides", std::vector<std::int64_t>{32});
    };
    cases.push_back({"Conv 1-D strided", conv1d});
    // A small LSTM (gates, tanh and sigmoid over a hidden size of 12, 3 steps).
    const std::int64_t hidden = 12, inputSize = 5;
    OneNodeSpec lstm = nodeSpec("LSTM", 14,
                                {randomFloats({3, 2, inputSize}, seed++, -1.0f, 1.0f),
                                 randomFloats({1, 4 * hidden, inputSize}, seed++, -0.5f, 0.5f),
                                 randomFloats({1, 4 * hidden, hidden}, seed++, -0.5f, 0.5f),
                                 randomFloats({1, 8 * hidden}, seed++, -0.5f, 0.5f)},
                                3);
    lstm.attributes = [](onnx::NodeProto& node) { setAttr(node, "hidden_size", std::int64_t{12}); };
    cases.push_back({"LSTM", lstm});
    // com.microsoft: SkipLayerNormalization and the 4-bit MatMulNBits (hand-written AVX2
    // unpacking).
    for (std::int64_t n : {8, 24, 40}) {
        cases.push_back({"SkipLayerNormalization " + std::to_string(n),
                         nodeSpec("SkipLayerNormalization", 1,
                                  {randomFloats({2, 3, n}, seed++), randomFloats({2, 3, n}, seed++),
                                   randomFloats({n}, seed++), randomFloats({n}, seed++)},
                                  1, "com.microsoft")});
    }
    for (std::int64_t k : {16, 48}) {
        const std::int64_t n = 5, block = 16, blocks = k / block;
        OneNodeSpec nbits =
            nodeSpec("MatMulNBits", 1,
                     {randomFloats({3, k}, seed++),
                      randomIntegers<std::uint8_t>({n, blocks, block / 2}, seed++, 0, 255),
                      randomFloats({n * blocks}, seed++, 0.01f, 0.1f)},
                     1, "com.microsoft");
        nbits.attributes = [k, n](onnx::NodeProto& node) {
            setAttr(node, "K", k);
            setAttr(node, "N", n);
            setAttr(node, "bits", std::int64_t{4});
            setAttr(node, "block_size", std::int64_t{16});
        };
        cases.push_back({"MatMulNBits K=" + std::to_string(k), nbits});
    }
    // accuracy_level 4: the integer block products (AVX2 maddubs against the baseline's scalar
    // loop), blocks of 32 eight at a time and the last chunk alone.
    for (std::int64_t k : {256, 80}) {
        const std::int64_t n = 5, block = 32, blocks = (k + block - 1) / block;
        OneNodeSpec nbits =
            nodeSpec("MatMulNBits", 1,
                     {randomFloats({3, k}, seed++),
                      randomIntegers<std::uint8_t>({n, blocks, block / 2}, seed++, 0, 255),
                      randomFloats({n * blocks}, seed++, 0.01f, 0.1f)},
                     1, "com.microsoft");
        nbits.attributes = [k, n](onnx::NodeProto& node) {
            setAttr(node, "K", k);
            setAttr(node, "N", n);
            setAttr(node, "bits", std::int64_t{4});
            setAttr(node, "block_size", std::int64_t{32});
            setAttr(node, "accuracy_level", std::int64_t{4});
        };
        cases.push_back({"MatMulNBits level 4 K=" + std::to_string(k), nbits});
    }
    return cases;
}

TEST(CpuIsa, DispatchPicksABuiltIsaThisCpuRuns) {
    const std::vector<CpuIsa> built = engine::builtCpuIsas();
    ASSERT_FALSE(built.empty());
    EXPECT_EQ(built.front(), CpuIsa::Baseline);
    const CpuIsa chosen = engine::kernelCpuIsa();
    EXPECT_NE(std::find(built.begin(), built.end(), chosen), built.end());
    EXPECT_TRUE(engine::cpuSupports(chosen));
    EXPECT_TRUE(engine::cpuSupports(CpuIsa::Baseline));
    // The best: no built ISA above the chosen one runs here (unless ONNXLENS_CPU_ISA caps it).
    if (!std::getenv("ONNXLENS_CPU_ISA"))
        for (CpuIsa isa : built)
            if (isa > chosen) {
                EXPECT_FALSE(engine::cpuSupports(isa)) << engine::cpuIsaName(isa);
            }
    // AVX-512 implies AVX2 (the objects are chosen as a ladder).
    if (engine::cpuSupports(CpuIsa::Avx512)) {
        EXPECT_TRUE(engine::cpuSupports(CpuIsa::Avx2));
    }
    if (engine::cpuSupports(CpuIsa::Avx512Vnni)) {
        EXPECT_TRUE(engine::cpuSupports(CpuIsa::Avx512));
    }
    const std::string summary = engine::kernelIsaSummary();
    if (built.size() > 1) {
        EXPECT_NE(summary.find("dispatching"), std::string::npos) << summary;
        if (chosen != CpuIsa::Baseline) {
            EXPECT_EQ(summary.rfind(engine::cpuIsaName(chosen), 0), 0u) << summary;
        }
        for (CpuIsa isa : built) {
            if (isa != CpuIsa::Baseline) {
                EXPECT_EQ(engine::cpuIsaFamilies(isa).empty(), !engine::cpuSupports(isa));
            }
        }
    }
    EXPECT_TRUE(engine::cpuIsaFamilies(CpuIsa::Baseline).empty());
}

TEST(CpuIsa, EveryIsaRegistryHasTheSameKernels) {
    const auto key = [](const KernelRegistry& registry) {
        std::vector<std::string> out;
        for (const auto& e : registry.entries())
            out.push_back(e.domain + "/" + e.opType + "/" + std::to_string(e.sinceVersion) + "-" +
                          std::to_string(e.untilVersion));
        std::sort(out.begin(), out.end());
        return out;
    };
    const std::vector<std::string> baseline = key(engine::makeKernelRegistry(CpuIsa::Baseline));
    EXPECT_EQ(key(KernelRegistry::global()), baseline);
    for (CpuIsa isa : engine::builtCpuIsas()) {
        if (engine::cpuSupports(isa)) {
            EXPECT_EQ(key(engine::makeKernelRegistry(isa)), baseline) << engine::cpuIsaName(isa);
        }
    }
}

TEST(CpuIsa, UnsupportedOrUnbuiltIsaIsAnError) {
    for (CpuIsa isa : {CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Vnni}) {
        const std::vector<CpuIsa> built = engine::builtCpuIsas();
        const bool available =
            engine::cpuSupports(isa) && std::find(built.begin(), built.end(), isa) != built.end();
        if (available)
            EXPECT_NO_THROW(engine::makeKernelRegistry(isa));
        else
            EXPECT_THROW(engine::makeKernelRegistry(isa), engine::EngineError)
                << engine::cpuIsaName(isa);
    }
}

TEST(CpuIsa, PerIsaKernelsMatchTheBaseline) {
    const KernelRegistry baseline = engine::makeKernelRegistry(CpuIsa::Baseline);
    int compared = 0;
    for (CpuIsa isa : engine::builtCpuIsas()) {
        if (isa == CpuIsa::Baseline || !engine::cpuSupports(isa)) continue;
        const KernelRegistry registry = engine::makeKernelRegistry(isa);
        for (const auto& [name, spec] : dispatchCases()) {
            SCOPED_TRACE(engine::cpuIsaName(isa) + ": " + name);
            const std::vector<Value> expected = runWith(baseline, spec);
            const std::vector<Value> actual = runWith(registry, spec);
            ASSERT_EQ(actual.size(), expected.size());
            for (std::size_t o = 0; o < expected.size(); ++o) {
                const Tensor& e = expected[o].tensor();
                const Tensor& a = actual[o].tensor();
                // Integer products are exact on every ISA; float ones differ by FMA's rounding.
                const engine::Tolerance tolerance = e.dtype() == engine::DataType::Float
                                                        ? engine::Tolerance{1e-5, 1e-5}
                                                        : engine::Tolerance{0.0, 0.0};
                EXPECT_TRUE(tensorsClose(a, e, tolerance)) << "output " << o;
            }
            ++compared;
        }
    }
    if (compared == 0) GTEST_SKIP() << "no per-ISA kernels here: " << engine::kernelIsaSummary();
}

// The per-ISA MatMul against a double-precision product computed here (not only against the
// baseline's kernel), on a size with tails in every dimension.
TEST(CpuIsa, DispatchedMatMulMatchesADoubleReference) {
    const std::int64_t m = 7, k = 37, n = 19;
    const Tensor a = randomFloats({m, k}, 91), b = randomFloats({k, n}, 92);
    std::vector<float> expected(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t p = 0; p < k; ++p)
                sum += double(a.data<float>()[i * k + p]) * double(b.data<float>()[p * n + j]);
            expected[static_cast<std::size_t>(i * n + j)] = static_cast<float>(sum);
        }
    for (CpuIsa isa : engine::builtCpuIsas()) {
        if (!engine::cpuSupports(isa)) continue;
        SCOPED_TRACE(engine::cpuIsaName(isa));
        const auto out = runWith(engine::makeKernelRegistry(isa), nodeSpec("MatMul", 13, {a, b}));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(
            tensorsClose(out[0].tensor(), floats({m, n}, expected), engine::Tolerance{1e-5, 1e-5}));
    }
}

}  // namespace
}  // namespace onnxlens::testing
