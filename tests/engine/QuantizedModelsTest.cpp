// Quantized and float16 models (issue 17): the int8 products on oneDNN against products computed
// here, the MatMulIntegerToFloat fusion of what dynamic quantizers write, the int8 tiny-BERT
// sample against ONNX Runtime, and float16 models computed in float.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

std::unique_ptr<engine::Session> session(const onnx::ModelProto& model, bool optimize) {
    return compileForTest(model, optimize, 1, "quantized.onnx");
}

// Distinct values in [-range, range] (integers when T is integral).
template <class T>
std::vector<T> pattern(std::size_t count, int range, int step) {
    std::vector<T> v(count);
    for (std::size_t i = 0; i < count; ++i)
        v[i] = static_cast<T>(static_cast<int>((i * static_cast<std::size_t>(step)) %
                                               static_cast<std::size_t>(2 * range + 1)) -
                              range);
    return v;
}

TEST(QuantizedModels, MatMulIntegerOnInt8WeightsEqualsTheIntegerProduct) {
    // A uint8 with a zero point, B int8 symmetric; 1 and 3 rows run on the few-row column kernel,
    // 7 on oneDNN.
    for (const std::int64_t m : {1, 3, 7}) {
        const std::int64_t k = 70, n = 33;
        std::vector<std::uint8_t> a(static_cast<std::size_t>(m * k));
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>((i * 37) % 256);
        const std::vector<std::int8_t> b =
            pattern<std::int8_t>(static_cast<std::size_t>(k * n), 127, 29);
        const std::uint8_t zeroPoint = 131;
        OneNodeSpec spec{
            "MatMulInteger",
            "",
            10,
            {Value(makeTensor<std::uint8_t>({1, m, k}, a)),
             Value(makeTensor<std::int8_t>({k, n}, b)),
             Value(Tensor::scalar<std::uint8_t>(zeroPoint)), Value(Tensor::scalar<std::int8_t>(0))},
            1,
            {}};
        const Tensor y = runOneNodeTensor(spec);
        ASSERT_EQ(y.shape(), (Shape{1, m, n}));
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                std::int32_t expected = 0;
                for (std::int64_t t = 0; t < k; ++t)
                    expected += (a[static_cast<std::size_t>(i * k + t)] - zeroPoint) *
                                b[static_cast<std::size_t>(t * n + j)];
                ASSERT_EQ(y.data<std::int32_t>()[i * n + j], expected) << i << "," << j;
            }
    }
}

// The extremes: activations 255 and 0 against weights -128 and 127. Int8 kernels that add two
// u8 x s8 products in a saturating int16 (oneDNN without VNNI) would clip 255 * -128 * 2; the
// engine's product stays exact on every processor.
TEST(QuantizedModels, MatMulIntegerAtTheValueExtremesIsExact) {
    for (const std::int64_t m : {1, 3, 7}) {
        const std::int64_t k = 96, n = 40;
        std::vector<std::uint8_t> a(static_cast<std::size_t>(m * k));
        std::vector<std::int8_t> b(static_cast<std::size_t>(k * n));
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = (i % 7 == 3) ? 0 : 255;
        for (std::size_t i = 0; i < b.size(); ++i)
            b[i] =
                static_cast<std::int8_t>((i / static_cast<std::size_t>(n)) % 5 == 4 ? 127 : -128);
        for (const std::uint8_t zeroPoint : {std::uint8_t{0}, std::uint8_t{255}}) {
            OneNodeSpec spec{"MatMulInteger",
                             "",
                             10,
                             {Value(makeTensor<std::uint8_t>({m, k}, a)),
                              Value(makeTensor<std::int8_t>({k, n}, b)),
                              Value(Tensor::scalar<std::uint8_t>(zeroPoint)),
                              Value(Tensor::scalar<std::int8_t>(0))},
                             1,
                             {}};
            const Tensor y = runOneNodeTensor(spec);
            ASSERT_EQ(y.shape(), (Shape{m, n}));
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    std::int64_t expected = 0;
                    for (std::int64_t t = 0; t < k; ++t)
                        expected += (a[static_cast<std::size_t>(i * k + t)] - zeroPoint) *
                                    b[static_cast<std::size_t>(t * n + j)];
                    ASSERT_EQ(y.data<std::int32_t>()[i * n + j], expected)
                        << i << "," << j << " zero point " << int(zeroPoint) << ", " << m
                        << " rows";
                }
        }
    }
}

// One node alternating between few rows (the column kernel, whose weight copy releases oneDNN's)
// and many (oneDNN, whose reordered copy releases the columns), as a decoder's prefill and tokens
// do: exact every time.
TEST(QuantizedModels, AlternatingFewAndManyRowsStaysExact) {
    const std::int64_t k = 40, n = 24;
    onnx::ModelProto model = emptyModel(13);
    auto& g = *model.mutable_graph();
    auto* in = g.add_input();
    in->set_name("a");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::UINT8);
    tt->mutable_shape()->add_dim()->set_dim_param("rows");
    tt->mutable_shape()->add_dim()->set_dim_value(k);
    const std::vector<std::int8_t> b =
        pattern<std::int8_t>(static_cast<std::size_t>(k * n), 127, 13);
    addInitializer(g, "b", makeTensor<std::int8_t>({k, n}, b));
    addInitializer(g, "a_zero_point", Tensor::scalar<std::uint8_t>(7));
    addNode(g, "MatMulInteger", {"a", "b", "a_zero_point"}, {"y"});
    g.add_output()->set_name("y");
    auto s = session(model, false);
    ASSERT_TRUE(s);
    for (const std::int64_t rows : {1, 9, 2, 9, 1}) {
        std::vector<std::uint8_t> a(static_cast<std::size_t>(rows * k));
        for (std::size_t i = 0; i < a.size(); ++i)
            a[i] = static_cast<std::uint8_t>((i * 53 + static_cast<std::size_t>(rows)) % 256);
        auto out = s->run({{"a", Value(makeTensor<std::uint8_t>({rows, k}, a))}});
        ASSERT_TRUE(out) << out.error().message;
        const Tensor& y = (*out)[0].tensor();
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                std::int32_t expected = 0;
                for (std::int64_t t = 0; t < k; ++t)
                    expected += (a[static_cast<std::size_t>(i * k + t)] - 7) *
                                b[static_cast<std::size_t>(t * n + j)];
                ASSERT_EQ(y.data<std::int32_t>()[i * n + j], expected) << rows << " rows";
            }
    }
}

// MatMulIntegerToFloat on few rows (a decoder's token): the column kernel's exact product, then
// the scale and the bias, for uint8 and int8 activations at the ends of their ranges.
TEST(QuantizedModels, FewRowIntegerToFloatProductsAreExactThenScaled) {
    const std::int64_t k = 67, n = 45;
    std::vector<std::int8_t> b(static_cast<std::size_t>(k * n));
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<std::int8_t>(i % 3 == 0 ? -128 : (i % 3 == 1 ? 127 : int(i % 11) - 5));
    std::vector<float> bias(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = 0.25f * static_cast<float>(j) - 3.0f;
    for (const std::int64_t m : {1, 4})
        for (const bool signedA : {false, true}) {
            std::vector<int> a(static_cast<std::size_t>(m * k));
            for (std::size_t i = 0; i < a.size(); ++i)
                a[i] = signedA ? (i % 4 == 0 ? 127 : -128) : (i % 4 == 0 ? 0 : 255);
            const int zeroPoint = signedA ? -3 : 200;
            Tensor aq = signedA ? makeTensor<std::int8_t>({m, k}, {a.begin(), a.end()})
                                : makeTensor<std::uint8_t>({m, k}, {a.begin(), a.end()});
            Tensor zp = signedA
                            ? Tensor::scalar<std::int8_t>(static_cast<std::int8_t>(zeroPoint))
                            : Tensor::scalar<std::uint8_t>(static_cast<std::uint8_t>(zeroPoint));
            OneNodeSpec spec{
                "MatMulIntegerToFloat",
                "com.microsoft",
                1,
                {Value(aq), Value(makeTensor<std::int8_t>({k, n}, b)),
                 Value(Tensor::scalar<float>(0.5f)), Value(Tensor::scalar<float>(0.25f)), Value(zp),
                 Value(Tensor::scalar<std::int8_t>(0)), Value(makeTensor<float>({n}, bias))},
                1,
                {}};
            const Tensor y = runOneNodeTensor(spec);
            ASSERT_EQ(y.shape(), (Shape{m, n}));
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    std::int64_t acc = 0;
                    for (std::int64_t t = 0; t < k; ++t)
                        acc += (a[static_cast<std::size_t>(i * k + t)] - zeroPoint) *
                               b[static_cast<std::size_t>(t * n + j)];
                    // Both scales are powers of two: the float result is exact.
                    const float expected =
                        static_cast<float>(acc) * 0.125f + bias[static_cast<std::size_t>(j)];
                    ASSERT_EQ(y.data<float>()[i * n + j], expected)
                        << i << "," << j << (signedA ? " int8" : " uint8") << ", " << m << " rows";
                }
        }
}

// x -> DynamicQuantizeLinear -> MatMulInteger(W int8) -> Cast -> Mul(Mul(x_scale, w_scale))
// -> Add(bias) [-> Gelu], the layout of onnxruntime.quantization.quantize_dynamic.
onnx::ModelProto dynamicQuantizedMatMul(bool gelu, int opset = 20) {
    onnx::ModelProto model = emptyModel(opset);
    auto& g = *model.mutable_graph();
    const std::int64_t k = 96, n = 80;
    addFloatInput(g, "x", {2, 5, k});
    std::vector<float> bias(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i) - 0.3f;
    addInitializer(g, "w", makeTensor<std::int8_t>({k, n}, pattern<std::int8_t>(k * n, 127, 41)));
    addInitializer(g, "w_scale", Tensor::scalar<float>(0.0037f));
    addInitializer(g, "w_zero_point", Tensor::scalar<std::int8_t>(0));
    addInitializer(g, "bias", makeTensor<float>({n}, bias));
    addNode(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
    addNode(g, "MatMulInteger", {"xq", "w", "xzp", "w_zero_point"}, {"acc"});
    addNode(g, "Mul", {"xs", "w_scale"}, {"scale"});
    setAttr(*addNode(g, "Cast", {"acc"}, {"acc_float"}), "to", std::int64_t{1});
    addNode(g, "Mul", {"acc_float", "scale"}, {"scaled"});
    addNode(g, "Add", {"scaled", "bias"}, {gelu ? "pre" : "y"});
    if (gelu) addNode(g, "Gelu", {"pre"}, {"y"});
    g.add_output()->set_name("y");
    return model;
}

void expectSameOutputs(const onnx::ModelProto& model, engine::Tolerance tolerance) {
    auto reference = session(model, false);
    auto optimized = session(model, true);
    ASSERT_TRUE(reference && optimized);
    auto feeds = engine::prepareFeeds(reference->inputs(), {}, {}, 11);
    ASSERT_TRUE(feeds);
    auto expected = reference->run(*feeds);
    auto actual = optimized->run(*feeds);
    ASSERT_TRUE(expected && actual);
    ASSERT_EQ(expected->size(), actual->size());
    for (std::size_t i = 0; i < expected->size(); ++i)
        EXPECT_TRUE(tensorsClose((*actual)[i].tensor(), (*expected)[i].tensor(), tolerance));
}

TEST(QuantizedModels, DynamicQuantizedMatMulChainBecomesOneKernelAndComputesTheSame) {
    for (bool gelu : {false, true}) {
        onnx::ModelProto copy = dynamicQuantizedMatMul(gelu);
        EXPECT_EQ(engine::fuseMatMulIntegerToFloat(copy), 1);
        auto counts = opCounts(copy);
        EXPECT_EQ(counts["MatMulIntegerToFloat"], 1);
        EXPECT_EQ(counts["MatMulInteger"] + counts["Cast"] + counts["Mul"] + counts["Add"] +
                      counts["Gelu"],
                  0);
        EXPECT_EQ(counts["DynamicQuantizeLinear"], 1);
        // One float rounding of (acc * scale) + bias may differ (fused multiply-add).
        expectSameOutputs(dynamicQuantizedMatMul(gelu), {1e-5, 1e-6});
    }
}

TEST(QuantizedModels, ScaleReadByAnotherNodeStaysAndTheProductStillFuses) {
    onnx::ModelProto model = dynamicQuantizedMatMul(false);
    model.mutable_graph()->add_output()->set_name("scale");
    onnx::ModelProto copy = model;
    EXPECT_EQ(engine::fuseMatMulIntegerToFloat(copy), 1);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["Mul"], 1);  // the scale product, a graph output
    EXPECT_EQ(counts["MatMulIntegerToFloat"], 1);
    expectSameOutputs(model, {1e-5, 1e-6});
}

// The sample tiny BERT quantized by bench/make_dynamic_int8_model.py, run against ONNX Runtime's
// outputs for the graph as written (graph optimizations disabled). The tolerance is the spread of
// ONNX Runtime's own optimization levels on this model and input, measured by
// bench/int8_tiny_bert_reference.py: last_hidden_state 7.15e-07, pooled_output 2.09e-07 (max
// |a - b| between levels all, extended, basic, disabled). Every quantized value (uint8) agrees;
// the differences are float roundings (LayerNorm, Softmax, Tanh), as between ORT's levels.
TEST(QuantizedModels, TinyBertInt8AgreesWithOnnxRuntimeWithinItsOptimizationLevelsSpread) {
    const auto dir =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "tests" / "engine" / "data" / "tiny_bert_int8";
    auto loaded = loadModel(dir / "model.onnx");
    ASSERT_TRUE(loaded) << loaded.error().message;
    auto s = session(*loaded->proto, true);
    ASSERT_TRUE(s);
    std::map<std::string, Value> feeds;
    for (int i = 0; i < 2; ++i) {
        auto v =
            engine::readValueFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
        ASSERT_TRUE(v) << v.error().message;
        feeds[s->inputs()[static_cast<std::size_t>(i)].name] = *v;
    }
    auto outputs = s->run(feeds);
    ASSERT_TRUE(outputs) << outputs.error().message;
    const double spread[] = {7.152557373046875e-07, 2.086162567138672e-07};
    for (int i = 0; i < 2; ++i) {
        auto expected = engine::readValueFile(dir / "test_data_set_0" /
                                              ("output_" + std::to_string(i) + ".pb"));
        ASSERT_TRUE(expected);
        // Plus one float32 rounding step at these outputs' magnitude (< 4): a build without
        // -march=native (the sanitized one) sums the exported LayerNorm in another order, and
        // ONNX Runtime's own "all" level lands one step outside the spread of the others too.
        const double oneStep = 2.384185791015625e-07;
        EXPECT_TRUE(tensorsClose((*outputs)[static_cast<std::size_t>(i)].tensor(),
                                 expected->tensor(), {0.0, spread[i] + oneStep}))
            << "output " << i;
    }
    auto counts = opCounts(s->optimizedModel());
    EXPECT_EQ(counts["MatMulIntegerToFloat"], 12);
    EXPECT_EQ(counts["MatMulInteger"], 0);
}

// x (float16) -> Conv (float16 weights) -> Relu -> Cast to float16 (a no-op kept for its
// rounding) -> y (float16).
onnx::ModelProto float16ConvModel() {
    onnx::ModelProto model = emptyModel(17);
    auto& g = *model.mutable_graph();
    auto* in = g.add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT16);
    for (std::int64_t d : {1, 8, 10, 10}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    std::vector<float> w(16 * 8 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * std::cos(0.7f * static_cast<float>(i));
    addInitializer(g, "w", makeTensor<float>({16, 8, 3, 3}, w).castTo(DataType::Float16));
    setAttr(*addNode(g, "Conv", {"x", "w"}, {"conv"}), "pads",
            std::vector<std::int64_t>{1, 1, 1, 1});
    addNode(g, "Relu", {"conv"}, {"relu"});
    setAttr(*addNode(g, "Cast", {"relu"}, {"y"}), "to", std::int64_t{10});
    auto* out = g.add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
    return model;
}

TEST(QuantizedModels, Float16ModelComputesInFloatWithCastsAtItsBorders) {
    onnx::ModelProto copy = float16ConvModel();
    EXPECT_GT(engine::computeFloat16InFloat(copy, {}), 0);
    for (const auto& init : copy.graph().initializer())
        EXPECT_EQ(init.data_type(), onnx::TensorProto::FLOAT);
    // x is read through one Cast to float; y is written by a Cast to float16; the model's Cast to
    // float16 stays, followed by a Cast back to float.
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["Cast"], 4);
    EXPECT_EQ(copy.graph().node(0).op_type(), "Cast");
    EXPECT_EQ(copy.graph().node(0).input(0), "x");
    const auto& last = copy.graph().node(copy.graph().node_size() - 1);
    EXPECT_EQ(last.op_type(), "Cast");
    EXPECT_EQ(last.output(0), "y");
    EXPECT_EQ(last.attribute(0).i(), onnx::TensorProto::FLOAT16);
    // float16 rounding of the unoptimized run's intermediate values: a few float16 ulps.
    expectSameOutputs(float16ConvModel(), {4e-3, 1e-3});
}

TEST(QuantizedModels, FloatModelIsLeftAsItIs) {
    onnx::ModelProto model = dynamicQuantizedMatMul(false);
    const std::string before = model.SerializeAsString();
    EXPECT_EQ(engine::computeFloat16InFloat(model, {}), 0);
    EXPECT_EQ(model.SerializeAsString(), before);
}

}  // namespace
