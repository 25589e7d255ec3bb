// The quantized convolution fusions (engine/src/optimizer/QuantizedConvFusions.cpp): what dynamic
// quantizers write around ConvInteger, and QDQ pairs around Conv, become one com.onnxlens
// ConvIntegerToFloat each and compute what the unfused graph computes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

std::unique_ptr<engine::Session> session(const onnx::ModelProto& model, bool optimize) {
    return compileForTest(model, optimize, 1, "quantized_conv.onnx");
}

// Runs the model as written and optimized on the same random inputs; returns the optimized
// model.
onnx::ModelProto expectSameOutputs(const onnx::ModelProto& model, engine::Tolerance tolerance) {
    auto reference = session(model, false);
    auto optimized = session(model, true);
    if (!reference || !optimized) return {};
    auto feeds = engine::prepareFeeds(reference->inputs(), {}, {}, 11);
    EXPECT_TRUE(feeds);
    if (!feeds) return {};
    auto expected = reference->run(*feeds);
    auto actual = optimized->run(*feeds);
    EXPECT_TRUE(expected && actual);
    if (!expected || !actual) return {};
    EXPECT_EQ(expected->size(), actual->size());
    for (std::size_t i = 0; i < expected->size(); ++i)
        EXPECT_TRUE(tensorsClose((*actual)[i].tensor(), (*expected)[i].tensor(), tolerance))
            << "output " << i;
    return optimized->optimizedModel();
}

std::vector<float> wave(std::size_t count, float scale, float step) {
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = scale * std::sin(step * static_cast<float>(i));
    return v;
}

std::vector<std::int8_t> int8Wave(std::size_t count, int step) {
    std::vector<std::int8_t> v(count);
    for (std::size_t i = 0; i < count; ++i)
        v[i] = static_cast<std::int8_t>(
            static_cast<int>((i * static_cast<std::size_t>(step)) % 255) - 127);
    return v;
}

void setPads(onnx::NodeProto& n, std::int64_t pad) {
    setAttr(n, "pads", std::vector<std::int64_t>{pad, pad, pad, pad});
}

// x -> DynamicQuantizeLinear -> ConvInteger(W int8, pads 1) -> Cast -> Mul(Mul(x_scale, w_scale
// [M, 1, 1])) -> Add(bias [M, 1, 1]) -> Relu, as `onnxlens-cli quantize --op-types Conv` (and
// ONNX Runtime's quantize_dynamic) write a Conv + Relu.
onnx::ModelProto dynamicQuantizedConv(bool withBias, bool withRelu) {
    onnx::ModelProto model = emptyModel(17);
    auto& g = *model.mutable_graph();
    const std::int64_t c = 8, m = 16;
    addFloatInput(g, "x", {1, c, 10, 10});
    addInitializer(g, "w", makeTensor<std::int8_t>({m, c, 3, 3}, int8Wave(m * c * 9, 37)));
    std::vector<float> scales = wave(m, 0.002f, 0.9f);
    for (auto& s : scales) s = std::abs(s) + 0.001f;
    addInitializer(g, "w_scale", makeTensor<float>({m, 1, 1}, scales));
    addInitializer(g, "w_zero_point", Tensor::scalar<std::int8_t>(0));
    addInitializer(g, "bias", makeTensor<float>({m, 1, 1}, wave(m, 0.3f, 1.7f)));
    addNode(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
    setPads(*addNode(g, "ConvInteger", {"xq", "w", "xzp", "w_zero_point"}, {"acc"}), 1);
    setAttr(*addNode(g, "Cast", {"acc"}, {"acc_float"}), "to", std::int64_t{1});
    addNode(g, "Mul", {"xs", "w_scale"}, {"scale"});
    const std::string scaled = withBias || withRelu ? "scaled" : "y";
    addNode(g, "Mul", {"acc_float", "scale"}, {scaled});
    std::string last = scaled;
    if (withBias) {
        addNode(g, "Add", {scaled, "bias"}, {withRelu ? "biased" : "y"});
        last = "biased";
    }
    if (withRelu) addNode(g, "Relu", {last}, {"y"});
    g.add_output()->set_name("y");
    return model;
}

TEST(QuantizedConvFusions, DynamicQuantizedConvChainBecomesOneKernelAndComputesTheSame) {
    for (bool bias : {false, true})
        for (bool relu : {false, true}) {
            SCOPED_TRACE(std::string(bias ? "bias " : "") + (relu ? "relu" : ""));
            onnx::ModelProto copy = dynamicQuantizedConv(bias, relu);
            EXPECT_EQ(engine::fuseConvIntegerToFloat(copy), 1);
            auto counts = opCounts(copy);
            EXPECT_EQ(counts["ConvIntegerToFloat"], 1);
            EXPECT_EQ(counts["ConvInteger"] + counts["Cast"] + counts["Mul"] + counts["Add"] +
                          counts["Relu"],
                      0);
            EXPECT_EQ(counts["DynamicQuantizeLinear"], 1);
            const auto optimized =
                expectSameOutputs(dynamicQuantizedConv(bias, relu), {1e-5, 1e-6});
            EXPECT_EQ(opCounts(optimized)["ConvIntegerToFloat"], 1);
        }
}

TEST(QuantizedConvFusions, ABiasThatDoesNotBroadcastOverChannelsStaysAnAdd) {
    onnx::ModelProto model = dynamicQuantizedConv(true, false);
    // [1, 1, 10] broadcasts along the last spatial axis, not over channels.
    for (auto& init : *model.mutable_graph()->mutable_initializer())
        if (init.name() == "bias")
            init =
                engine::tensorToProto(makeTensor<float>({1, 1, 10}, wave(10, 0.3f, 1.1f)), "bias");
    onnx::ModelProto copy = model;
    EXPECT_EQ(engine::fuseConvIntegerToFloat(copy), 1);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["Add"], 1);
    EXPECT_EQ(counts["ConvIntegerToFloat"], 1);
    expectSameOutputs(model, {1e-5, 1e-6});
}

// x -> DynamicQuantizeLinear -> DequantizeLinear -> two Convs, each on DequantizeLinear(int8 W):
// conv A (per-channel scales, axis 0, bias, pads 1) -> Relu -> y1; conv B (per-tensor, stride 2,
// no bias) -> y2. The QDQ layout of `onnxlens-cli quantize --format qdq`.
onnx::ModelProto qdqConvs() {
    onnx::ModelProto model = emptyModel(17);
    auto& g = *model.mutable_graph();
    const std::int64_t c = 8, m = 12;
    addFloatInput(g, "x", {1, c, 9, 9});
    addInitializer(g, "wa", makeTensor<std::int8_t>({m, c, 3, 3}, int8Wave(m * c * 9, 29)));
    std::vector<float> scales = wave(m, 0.002f, 0.7f);
    for (auto& s : scales) s = std::abs(s) + 0.001f;
    addInitializer(g, "wa_scale", makeTensor<float>({m}, scales));
    addInitializer(g, "wa_zero_point", Tensor::zeros(DataType::Int8, {m}));
    addInitializer(g, "ba", makeTensor<float>({m}, wave(m, 0.2f, 1.3f)));
    addInitializer(g, "wb", makeTensor<std::int8_t>({4, c, 3, 3}, int8Wave(4 * c * 9, 53)));
    addInitializer(g, "wb_scale", Tensor::scalar<float>(0.003f));
    addInitializer(g, "wb_zero_point", Tensor::scalar<std::int8_t>(0));
    addNode(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
    addNode(g, "DequantizeLinear", {"xq", "xs", "xzp"}, {"xd"});
    setAttr(*addNode(g, "DequantizeLinear", {"wa", "wa_scale", "wa_zero_point"}, {"wad"}), "axis",
            std::int64_t{0});
    addNode(g, "DequantizeLinear", {"wb", "wb_scale", "wb_zero_point"}, {"wbd"});
    setPads(*addNode(g, "Conv", {"xd", "wad", "ba"}, {"ya"}), 1);
    addNode(g, "Relu", {"ya"}, {"y1"});
    setAttr(*addNode(g, "Conv", {"xd", "wbd"}, {"y2"}), "strides", std::vector<std::int64_t>{2, 2});
    g.add_output()->set_name("y1");
    g.add_output()->set_name("y2");
    return model;
}

TEST(QuantizedConvFusions, QdqConvsRunAsInt8ConvolutionsAndComputeTheSame) {
    onnx::ModelProto copy = qdqConvs();
    EXPECT_EQ(engine::fuseQdqConv(copy), 2);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["ConvIntegerToFloat"], 2);
    EXPECT_EQ(counts["Conv"] + counts["DequantizeLinear"] + counts["Relu"], 0);
    EXPECT_EQ(counts["DynamicQuantizeLinear"], 1);
    // The whole pipeline: constant folding keeps the weights int8 for the fusion.
    // The float Conv sums float products (x - z) * s_x * w * s_w; the fused kernel the exact
    // integer sum, scaled once: float roundings apart.
    const auto optimized = expectSameOutputs(qdqConvs(), {1e-4, 1e-5});
    auto after = opCounts(optimized);
    EXPECT_EQ(after["ConvIntegerToFloat"], 2);
    EXPECT_EQ(after["DequantizeLinear"] + after["Conv"] + after["FusedConv"], 0);
}

TEST(QuantizedConvFusions, AnActivationDequantizeReadByAnotherNodeStays) {
    onnx::ModelProto model = qdqConvs();
    model.mutable_graph()->add_output()->set_name("xd");
    onnx::ModelProto copy = model;
    EXPECT_EQ(engine::fuseQdqConv(copy), 2);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["DequantizeLinear"], 1);  // the activation's, a graph output
    EXPECT_EQ(counts["ConvIntegerToFloat"], 2);
    expectSameOutputs(model, {1e-4, 1e-5});
}

TEST(QuantizedConvFusions, PerChannelWeightScalesOnTheWrongAxisAreNotFused) {
    onnx::ModelProto model = qdqConvs();
    // Conv A's weight scales along axis 1 (input channels, 8 of them): not per output channel.
    auto& g = *model.mutable_graph();
    for (auto& n : *g.mutable_node())
        if (n.op_type() == "DequantizeLinear" && n.input(0) == "wa")
            n.mutable_attribute(0)->set_i(1);
    for (auto& init : *g.mutable_initializer()) {
        if (init.name() == "wa_scale")
            init = engine::tensorToProto(makeTensor<float>({8}, wave(8, 0.001f, 0.5f)), "wa_scale");
        if (init.name() == "wa_zero_point")
            init = engine::tensorToProto(Tensor::zeros(DataType::Int8, {8}), "wa_zero_point");
    }
    onnx::ModelProto copy = model;
    EXPECT_EQ(engine::fuseQdqConv(copy), 1);
    EXPECT_EQ(opCounts(copy)["Conv"], 1);
    // In the pipeline constant folding then dequantizes conv A's weights once (it keeps only the
    // weight DequantizeLinear nodes the fusion takes): the activation's stays, for conv A.
    auto counts = opCounts(expectSameOutputs(model, {1e-4, 1e-5}));
    EXPECT_EQ(counts["ConvIntegerToFloat"], 1);
    EXPECT_EQ(counts["DequantizeLinear"], 1);
}

}  // namespace

// x [2, 5, 16] -> QuantizeLinear (uint8, per tensor) -> DequantizeLinear -> three MatMuls on
// DequantizeLinear(int8 W [16, N]): A per-column scales (axis 1) and zero points, B per tensor,
// C per-column scales on the wrong axis (0: one per row of W, 16 of them) -> y1, y2, y3. The QDQ
// layout of a statically quantized transformer's products.
onnx::ModelProto qdqMatMuls() {
    onnx::ModelProto model = emptyModel(17);
    auto& g = *model.mutable_graph();
    const std::int64_t k = 16, na = 12, nb = 7;
    addFloatInput(g, "x", {2, 5, k});
    addInitializer(g, "x_scale", Tensor::scalar<float>(0.02f));
    addInitializer(g, "x_zero_point", Tensor::scalar<std::uint8_t>(131));
    addInitializer(g, "wa", makeTensor<std::int8_t>({k, na}, int8Wave(k * na, 29)));
    std::vector<float> scales = wave(na, 0.002f, 0.7f);
    for (auto& s : scales) s = std::abs(s) + 0.001f;
    addInitializer(g, "wa_scale", makeTensor<float>({na}, scales));
    addInitializer(g, "wa_zero_point", Tensor::zeros(DataType::Int8, {na}));
    addInitializer(g, "wb", makeTensor<std::int8_t>({k, nb}, int8Wave(k * nb, 53)));
    addInitializer(g, "wb_scale", Tensor::scalar<float>(0.003f));
    std::vector<float> rowScales = wave(k, 0.002f, 0.3f);
    for (auto& s : rowScales) s = std::abs(s) + 0.001f;
    addInitializer(g, "wc_scale", makeTensor<float>({k}, rowScales));
    addNode(g, "QuantizeLinear", {"x", "x_scale", "x_zero_point"}, {"xq"});
    addNode(g, "DequantizeLinear", {"xq", "x_scale", "x_zero_point"}, {"xd"});
    setAttr(*addNode(g, "DequantizeLinear", {"wa", "wa_scale", "wa_zero_point"}, {"wad"}), "axis",
            std::int64_t{1});
    addNode(g, "DequantizeLinear", {"wb", "wb_scale"}, {"wbd"});
    setAttr(*addNode(g, "DequantizeLinear", {"wb", "wc_scale"}, {"wcd"}), "axis", std::int64_t{0});
    addNode(g, "MatMul", {"xd", "wad"}, {"y1"});
    addNode(g, "MatMul", {"xd", "wbd"}, {"y2"});
    addNode(g, "MatMul", {"xd", "wcd"}, {"y3"});
    for (const char* out : {"y1", "y2", "y3"}) g.add_output()->set_name(out);
    return model;
}

TEST(QuantizedConvFusions, QdqMatMulsRunAsInt8ProductsAndComputeTheSame) {
    onnx::ModelProto copy = qdqMatMuls();
    EXPECT_EQ(engine::fuseQdqMatMul(copy), 2);
    auto counts = opCounts(copy);
    EXPECT_EQ(counts["MatMulIntegerToFloat"], 2);
    EXPECT_EQ(counts["MatMul"], 1);            // per-row weight scales: not a product of integers
    EXPECT_EQ(counts["DequantizeLinear"], 2);  // C's weights and the activation (C reads it)
    // The whole pipeline: constant folding keeps the fused products' weights int8, and folds C's.
    // The float MatMul sums float products; the fused kernel the exact integer sum, scaled once.
    const auto optimized = expectSameOutputs(qdqMatMuls(), {1e-4, 1e-5});
    auto after = opCounts(optimized);
    EXPECT_EQ(after["MatMulIntegerToFloat"], 2);
    EXPECT_EQ(after["QuantizeLinear"], 1);
    for (const auto& init : optimized.graph().initializer()) {
        if (init.name() == "wa" || init.name() == "wb") {
            EXPECT_EQ(init.data_type(), onnx::TensorProto::INT8) << init.name();
        }
    }
}
