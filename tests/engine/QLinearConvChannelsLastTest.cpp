// The channels-last pass for 8-bit convolution chains (convertQLinearConvToChannelsLast) and the
// com.onnxlens QLinearConvChannelsLast kernel: which nodes move, where the Transposes land, and
// that the converted model computes exactly what the plain one does (uint8 and int8 activations,
// padding, depthwise and strided layers, oneDNN's path and the plain fallback).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

// Deterministic int8 weights in [-64, 64] (or the full range), and int32 biases.
Tensor int8Weights(Shape shape, int seed, bool fullRange) {
    const std::int64_t count = engine::shapeElementCount(shape);
    std::vector<std::int8_t> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i) {
        const int v = static_cast<int>((i * 37 + static_cast<std::size_t>(seed) * 101) % 255);
        values[i] = static_cast<std::int8_t>(fullRange ? v - 128 : v / 2 - 64);
    }
    return makeTensor<std::int8_t>(std::move(shape), values);
}

// The scale and zero point initializers of one quantized value (`signedValues`: int8).
void addQuantization(onnx::GraphProto& g, const std::string& value, float scale, int zeroPoint,
                     bool signedValues) {
    addInitializer(g, value + "_scale", makeTensor<float>({}, {scale}));
    if (signedValues)
        addInitializer(g, value + "_zp",
                       makeTensor<std::int8_t>({}, {static_cast<std::int8_t>(zeroPoint)}));
    else
        addInitializer(g, value + "_zp",
                       makeTensor<std::uint8_t>({}, {static_cast<std::uint8_t>(zeroPoint)}));
}

// QLinearConv from quantized `x` (`in` channels) to `y` (`out`), kernel k, padded to keep the
// size, with the given group and stride.
onnx::NodeProto* addQConv(onnx::GraphProto& g, const std::string& x, const std::string& y,
                          std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t group,
                          std::int64_t stride, int seed, bool signedValues, int weightZeroPoint,
                          bool zeroPointsZero = false) {
    addInitializer(g, y + "_w", int8Weights({out, in / group, k, k}, seed, weightZeroPoint != 0));
    addInitializer(g, y + "_w_scale", makeTensor<float>({}, {0.01f}));
    addInitializer(g, y + "_w_zp",
                   makeTensor<std::int8_t>({}, {static_cast<std::int8_t>(weightZeroPoint)}));
    std::vector<std::int32_t> bias(static_cast<std::size_t>(out));
    for (std::size_t m = 0; m < bias.size(); ++m)
        bias[m] = static_cast<std::int32_t>(m * 97 % 401) - 200;
    addInitializer(g, y + "_b", makeTensor<std::int32_t>({out}, bias));
    addQuantization(g, y, 0.08f, zeroPointsZero ? 0 : (signedValues ? -3 : 5), signedValues);
    auto* conv = addNode(g, "QLinearConv",
                         {x, x + "_scale", x + "_zp", y + "_w", y + "_w_scale", y + "_w_zp",
                          y + "_scale", y + "_zp", y + "_b"},
                         {y});
    if (group != 1) setAttr(*conv, "group", group);
    if (stride != 1) setAttr(*conv, "strides", std::vector<std::int64_t>{stride, stride});
    const std::int64_t pad = k / 2;
    setAttr(*conv, "pads", std::vector<std::int64_t>{pad, pad, pad, pad});
    return conv;
}

// image -> QuantizeLinear -> conv a (3x3, 8 -> 16) -> conv b (1x1) -> QLinearAdd(a, b) ->
// depthwise conv c (3x3, stride 2) -> QLinearGlobalAveragePool (channels_last = 0 written out)
// -> DequantizeLinear -> "pooled"; a is also the graph output "a" (a plain reader).
// `zeroPointsZero`: every convolution's input and output has zero point 0 (ReLU outputs).
onnx::ModelProto quantizedChain(bool signedValues, int weightZeroPoint = 0,
                                bool zeroPointsZero = false) {
    auto m = emptyModel();
    auto* ms = m.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "image", {2, 8, 11, 13});
    addQuantization(g, "x", 0.05f, zeroPointsZero ? 0 : (signedValues ? 7 : 120), signedValues);
    addNode(g, "QuantizeLinear", {"image", "x_scale", "x_zp"}, {"x"});
    addQConv(g, "x", "a", 8, 16, 3, 1, 1, 1, signedValues, 0, zeroPointsZero);
    addQConv(g, "a", "b", 16, 16, 1, 1, 1, 2, signedValues, weightZeroPoint, zeroPointsZero);
    addQuantization(g, "sum", 0.1f, zeroPointsZero ? 0 : (signedValues ? 1 : 100), signedValues);
    auto* add =
        addNode(g, "QLinearAdd",
                {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "sum_scale", "sum_zp"}, {"sum"});
    add->set_domain("com.microsoft");
    addQConv(g, "sum", "c", 16, 16, 3, 16, 2, 3, signedValues, 0, zeroPointsZero);
    addQuantization(g, "gap", 0.07f, signedValues ? 0 : 110, signedValues);
    auto* gap = addNode(g, "QLinearGlobalAveragePool",
                        {"c", "c_scale", "c_zp", "gap_scale", "gap_zp"}, {"gap"});
    gap->set_domain("com.microsoft");
    setAttr(*gap, "channels_last", std::int64_t{0});
    addNode(g, "DequantizeLinear", {"gap", "gap_scale", "gap_zp"}, {"pooled"});
    g.add_output()->set_name("pooled");
    g.add_output()->set_name("a");
    return m;
}

// The converted model gives the plain model's outputs, byte for byte, at 1 and 2 threads.
void expectChannelsLastComputesTheSame(const onnx::ModelProto& plain,
                                       const onnx::ModelProto& converted,
                                       const Shape& imageShape = {2, 8, 11, 13}) {
    const std::map<std::string, Value> feeds{
        {"image", Value(makeTensor<float>(imageShape, [&] {
             std::vector<float> v(static_cast<std::size_t>(engine::shapeElementCount(imageShape)));
             for (std::size_t i = 0; i < v.size(); ++i)
                 v[i] = static_cast<float>((i * 53) % 211) / 211.0f * 12.0f - 5.0f;
             return v;
         }()))}};
    const auto expected = runModelAsWritten(plain, feeds, 1);
    for (int threads : {1, 2}) {
        const auto actual = runModelAsWritten(converted, feeds, threads);
        ASSERT_EQ(actual.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const Tensor& a = actual[i].tensor();
            const Tensor& e = expected[i].tensor();
            ASSERT_EQ(a.dtype(), e.dtype()) << "output " << i;
            ASSERT_EQ(a.shape(), e.shape()) << "output " << i;
            ASSERT_EQ(0, std::memcmp(a.raw(), e.raw(), e.byteSize()))
                << "output " << i << " at " << threads << " thread(s)";
        }
    }
}

const onnx::NodeProto* nodeWithOutputPrefix(const onnx::ModelProto& m, const std::string& op,
                                            const std::string& prefix) {
    for (const auto& n : m.graph().node())
        if (n.op_type() == op && n.output(0).rfind(prefix, 0) == 0) return &n;
    return nullptr;
}

}  // namespace

TEST(QLinearConvChannelsLast, ChainMovesOnceInAndBackOnlyWherePlainReadersNeedIt) {
    const auto plain = quantizedChain(false);
    onnx::ModelProto converted = plain;
    // Three convolutions, the Add and the pool.
    EXPECT_EQ(engine::convertQLinearConvToChannelsLast(converted), 5);
    auto counts = opCounts(converted);
    EXPECT_EQ(counts["QLinearConvChannelsLast"], 3);
    EXPECT_EQ(counts["QLinearConv"], 0);
    // In: the quantized image. Back: "a" (a graph output) and the pooled value (DequantizeLinear
    // reads it).
    EXPECT_EQ(counts["Transpose"], 3);
    const auto* add = nodeWithOutputPrefix(converted, "QLinearAdd", "sum");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(add->input(0), "a/channels_last");
    const auto* gap = nodeWithOutputPrefix(converted, "QLinearGlobalAveragePool", "gap");
    ASSERT_NE(gap, nullptr);
    int channelsLastAttributes = 0;
    for (const auto& a : gap->attribute())
        if (a.name() == "channels_last") {
            ++channelsLastAttributes;
            EXPECT_EQ(a.i(), 1);
        }
    EXPECT_EQ(channelsLastAttributes, 1);  // set, not added beside the model's 0
    expectChannelsLastComputesTheSame(plain, converted);
}

TEST(QLinearConvChannelsLast, Int8ActivationsComputeTheSame) {
    const auto plain = quantizedChain(true);
    onnx::ModelProto converted = plain;
    EXPECT_EQ(engine::convertQLinearConvToChannelsLast(converted), 5);
    expectChannelsLastComputesTheSame(plain, converted);
}

// Zero points 0 on every convolution's input and output (ReLU outputs): oneDNN pads the
// channels-last input itself and requantizes in its own epilogue.
TEST(QLinearConvChannelsLast, ZeroPointsZeroComputeTheSame) {
    for (bool signedValues : {false, true}) {
        const auto plain = quantizedChain(signedValues, 0, true);
        onnx::ModelProto converted = plain;
        EXPECT_EQ(engine::convertQLinearConvToChannelsLast(converted), 5);
        expectChannelsLastComputesTheSame(plain, converted);
    }
}

// Depthwise layers of 192 channels and more take the engine's own kernel on a channels-last
// input (Int8DepthwiseConv.h): 3x3 (five tap pairs) and 5x5 (an odd count, the general loop),
// strides 1 and 2, padding, zero points 0 and not, 7-bit and full-range weights, uint8 and int8.
// The plain model's layers run on oneDNN's NCHW path; both give the same bytes.
TEST(QLinearConvChannelsLast, ManyChannelDepthwiseLayersComputeTheSame) {
    constexpr std::int64_t channels = 208;
    for (bool signedValues : {false, true})
        for (bool zeroPointsZero : {false, true})
            for (int weightZeroPoint : {0, 1}) {
                auto m = emptyModel();
                auto& g = *m.mutable_graph();
                addFloatInput(g, "image", {1, channels, 9, 11});
                addQuantization(g, "x", 0.05f, zeroPointsZero ? 0 : (signedValues ? 7 : 120),
                                signedValues);
                addNode(g, "QuantizeLinear", {"image", "x_scale", "x_zp"}, {"x"});
                // weightZeroPoint 1 asks int8Weights for the full range; the zero point itself
                // stays 0 (a nonzero one keeps the layer off both kernels).
                addQConv(g, "x", "a", channels, channels, 3, channels, 1, 4, signedValues, 0,
                         zeroPointsZero);
                addQConv(g, "a", "b", channels, channels, 5, channels, 2, 5, signedValues, 0,
                         zeroPointsZero);
                if (weightZeroPoint != 0)
                    for (auto& init : *g.mutable_initializer())
                        if (init.name() == "a_w" || init.name() == "b_w") {
                            const Tensor full = int8Weights(
                                {init.dims(0), init.dims(1), init.dims(2), init.dims(3)},
                                init.name() == "a_w" ? 4 : 5, true);
                            init.set_raw_data(full.raw(),
                                              static_cast<std::size_t>(full.byteSize()));
                        }
                addNode(g, "DequantizeLinear", {"b", "b_scale", "b_zp"}, {"pooled"});
                g.add_output()->set_name("pooled");
                onnx::ModelProto converted = m;
                EXPECT_EQ(engine::convertQLinearConvToChannelsLast(converted), 2);
                expectChannelsLastComputesTheSame(m, converted, {1, channels, 9, 11});
            }
}

// A nonzero weight zero point keeps oneDNN's path from the layer: the kernel then moves X to
// channels-first, computes it plainly and moves Y back.
TEST(QLinearConvChannelsLast, LayersOneDnnDoesNotTakeComputeTheSame) {
    const auto plain = quantizedChain(false, 3);
    onnx::ModelProto converted = plain;
    EXPECT_EQ(engine::convertQLinearConvToChannelsLast(converted), 5);
    expectChannelsLastComputesTheSame(plain, converted);
}

TEST(QLinearConvChannelsLast, OneConvolutionAloneStaysAsItIs) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "image", {1, 8, 6, 6});
    addQuantization(g, "x", 0.05f, 120, false);
    addNode(g, "QuantizeLinear", {"image", "x_scale", "x_zp"}, {"x"});
    addQConv(g, "x", "a", 8, 8, 3, 1, 1, 1, false, 0);
    g.add_output()->set_name("a");
    EXPECT_EQ(engine::convertQLinearConvToChannelsLast(m), 0);
    EXPECT_EQ(opCounts(m)["QLinearConv"], 1);
}

// A QLinearConv whose X is known not to be 4-D is the model's own error: it stays as written,
// for its kernel to report, while the valid chain beside it moves.
TEST(QLinearConvChannelsLast, ConvolutionOfAnotherInputRankStaysAsItIs) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "image", {1, 8, 6, 6});
    addFloatInput(g, "flat", {1, 8, 6});
    addQuantization(g, "x", 0.05f, 120, false);
    addQuantization(g, "f", 0.05f, 120, false);
    addNode(g, "QuantizeLinear", {"image", "x_scale", "x_zp"}, {"x"});
    addNode(g, "QuantizeLinear", {"flat", "f_scale", "f_zp"}, {"f"});
    addQConv(g, "x", "a", 8, 8, 3, 1, 1, 1, false, 0);
    addQConv(g, "a", "b", 8, 8, 1, 1, 1, 2, false, 0);
    addQConv(g, "f", "wrong", 8, 8, 3, 1, 1, 3, false, 0);
    g.add_output()->set_name("b");
    g.add_output()->set_name("wrong");
    EXPECT_EQ(engine::convertQLinearConvToChannelsLast(m), 2);
    auto counts = opCounts(m);
    EXPECT_EQ(counts["QLinearConvChannelsLast"], 2);
    EXPECT_EQ(counts["QLinearConv"], 1);
}

// The session's optimizer runs the pass (its name in the pass table).
TEST(QLinearConvChannelsLast, TheOptimizerRunsIt) {
    EXPECT_TRUE(engine::checkOptimizerPassNames({"qlinearconv-channels-last"}));
    onnx::ModelProto model = quantizedChain(false);
    const auto report = engine::optimizeModel(model, {});
    EXPECT_EQ(opCounts(model)["QLinearConvChannelsLast"], 3);
    int rewrites = -1;
    for (const auto& pass : report.passes)
        if (pass.pass == "qlinearconv-channels-last") rewrites = pass.rewrites;
    EXPECT_EQ(rewrites, 5);
}
