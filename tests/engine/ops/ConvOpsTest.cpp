// Conv, ConvTranspose, ConvInteger, QLinearConv against naive loop references written here.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

// Calls fn(index) for every multi-index of `shape` in row-major order.
void forEachIndex(const Shape& shape, const std::function<void(const Shape&)>& fn) {
    if (engine::shapeElementCount(shape) == 0) return;
    Shape index(shape.size(), 0);
    while (true) {
        fn(index);
        std::size_t d = shape.size();
        while (d > 0 && ++index[d - 1] == shape[d - 1]) index[--d] = 0;
        if (d == 0) return;
    }
}

std::int64_t flatIndex(const Shape& shape, const Shape& index) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
    return flat;
}

std::vector<double> randomValues(std::int64_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(count));
    for (auto& x : v) x = dist(rng);
    return v;
}

template <class T>
Tensor tensorOf(const Shape& shape, const std::vector<double>& values) {
    std::vector<T> converted(values.begin(), values.end());
    return makeTensor<T>(shape, converted);
}

struct ConvCase {
    Shape x, w;
    std::vector<std::int64_t> strides, pads, dilations;
    std::int64_t group = 1;
    bool bias = true;
};

// Direct definition of a grouped convolution with explicit pads.
Tensor referenceConv(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                     const std::vector<double>& b) {
    const std::size_t rank = c.x.size() - 2;
    Shape out{c.x[0], c.w[0]};
    for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t s = c.strides.empty() ? 1 : c.strides[d];
        const std::int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
        const std::int64_t pad = c.pads.empty() ? 0 : c.pads[d] + c.pads[d + rank];
        out.push_back((c.x[d + 2] + pad - (c.w[d + 2] - 1) * dil - 1) / s + 1);
    }
    std::vector<double> y(static_cast<std::size_t>(engine::shapeElementCount(out)), 0.0);
    const std::int64_t cg = c.w[1], mg = c.w[0] / c.group;
    Shape kernel(c.w.begin() + 2, c.w.end());
    forEachIndex(out, [&](const Shape& o) {
        const std::int64_t m = o[1], g = m / mg;
        double sum = c.bias ? b[m] : 0.0;
        for (std::int64_t ci = 0; ci < cg; ++ci)
            forEachIndex(kernel, [&](const Shape& k) {
                Shape xi{o[0], g * cg + ci};
                for (std::size_t d = 0; d < rank; ++d) {
                    const std::int64_t s = c.strides.empty() ? 1 : c.strides[d];
                    const std::int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
                    const std::int64_t pb = c.pads.empty() ? 0 : c.pads[d];
                    const std::int64_t i = o[d + 2] * s - pb + k[d] * dil;
                    if (i < 0 || i >= c.x[d + 2]) return;
                    xi.push_back(i);
                }
                Shape wi{m, ci};
                wi.insert(wi.end(), k.begin(), k.end());
                sum += x[flatIndex(c.x, xi)] * w[flatIndex(c.w, wi)];
            });
        y[flatIndex(out, o)] = sum;
    });
    return makeTensor<double>(out, y);
}

template <class T>
void checkConv(const ConvCase& c, unsigned seed) {
    const auto x = randomValues(engine::shapeElementCount(c.x), seed);
    const auto w = randomValues(engine::shapeElementCount(c.w), seed + 1);
    const auto b = randomValues(c.w[0], seed + 2);
    OneNodeSpec spec{"Conv", "", 17, {tensorOf<T>(c.x, x), tensorOf<T>(c.w, w)}};
    if (c.bias) spec.inputs.push_back(tensorOf<T>({c.w[0]}, b));
    spec.attributes = [&](onnx::NodeProto& node) {
        if (!c.strides.empty()) setAttr(node, "strides", c.strides);
        if (!c.pads.empty()) setAttr(node, "pads", c.pads);
        if (!c.dilations.empty()) setAttr(node, "dilations", c.dilations);
        setAttr(node, "group", c.group);
    };
    Tensor actual = runOneNodeTensor(spec);
    ASSERT_TRUE(actual.defined());
    EXPECT_TRUE(
        tensorsClose(actual.castTo(DataType::Double), referenceConv(c, x, w, b), {1e-4, 1e-5}));
}

const std::vector<ConvCase> kConvCases = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, {}, {}, {}, 1, true},                 // plain 2-D, batch 2
    {{1, 2, 9, 8}, {3, 2, 3, 2}, {2, 3}, {1, 0, 2, 1}, {}, 1, true},   // strides, asymmetric pads
    {{1, 4, 8, 8}, {6, 2, 3, 3}, {}, {1, 1, 1, 1}, {2, 2}, 2, false},  // groups + dilations
    {{1, 4, 6, 5}, {8, 1, 3, 3}, {1, 2}, {1, 1, 1, 1}, {}, 4, true},   // depthwise, multiplier 2
    {{2, 5, 4, 3}, {7, 5, 1, 1}, {}, {}, {}, 1, true},                 // pointwise
    {{1, 2, 11}, {3, 2, 4}, {2}, {2, 1}, {2}, 1, true},                // 1-D
    {{1, 2, 5, 4, 6}, {2, 1, 2, 3, 2}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}, {}, 2, true},  // 3-D
    {{1, 3, 70, 90}, {5, 3, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true},  // several column tiles
};

TEST(ConvOps, ConvMatchesDirectDefinitionInFloat) {
    unsigned seed = 10;
    for (const auto& c : kConvCases) checkConv<float>(c, seed += 3);
}

// double always runs the Eigen im2col/GEMM path, also in builds that use oneDNN for float.
TEST(ConvOps, ConvMatchesDirectDefinitionInDouble) {
    unsigned seed = 50;
    for (const auto& c : kConvCases) checkConv<double>(c, seed += 3);
}

TEST(ConvOps, ConvFloat16ComputesLikeFloat) {
    const Shape xs{1, 1, 3, 3}, ws{1, 1, 2, 2};
    const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 0, 0, -1};
    OneNodeSpec spec{
        "Conv", "", 17, {tensorOf<engine::float16>(xs, x), tensorOf<engine::float16>(ws, w)}};
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::Float16);
    // Each output is x[i][j] - x[i+1][j+1] = -4.
    EXPECT_TRUE(
        tensorsClose(y.castTo(DataType::Float), makeTensor<float>({1, 1, 2, 2}, {-4, -4, -4, -4})));
}

TEST(ConvOps, AutoPadSameUpperAndLowerPutTheOddPadDifferently) {
    // 1-D input [1 2 3 4], kernel [1 1], stride 1: one pad in total.
    auto run = [](const std::string& autoPad) {
        OneNodeSpec spec{
            "Conv",
            "",
            17,
            {makeTensor<float>({1, 1, 4}, {1, 2, 3, 4}), makeTensor<float>({1, 1, 2}, {1, 1})}};
        spec.attributes = [autoPad](onnx::NodeProto& n) { setAttr(n, "auto_pad", autoPad); };
        return runOneNodeTensor(spec);
    };
    EXPECT_TRUE(tensorsClose(run("SAME_UPPER"), makeTensor<float>({1, 1, 4}, {3, 5, 7, 4})));
    EXPECT_TRUE(tensorsClose(run("SAME_LOWER"), makeTensor<float>({1, 1, 4}, {1, 3, 5, 7})));
    EXPECT_TRUE(tensorsClose(run("VALID"), makeTensor<float>({1, 1, 3}, {3, 5, 7})));
}

TEST(ConvOps, EmptyBatchAndEmptyOutputGiveEmptyTensors) {
    OneNodeSpec empty{
        "Conv",
        "",
        17,
        {Tensor(DataType::Float, {0, 2, 5, 5}), Tensor::zeros(DataType::Float, {3, 2, 3, 3})}};
    Tensor y = runOneNodeTensor(empty);
    EXPECT_EQ(y.shape(), (Shape{0, 3, 3, 3}));
    // A kernel larger than the unpadded input leaves no output position.
    OneNodeSpec tooSmall{"Conv",
                         "",
                         17,
                         {Tensor::zeros(DataType::Float, {1, 1, 2, 2}),
                          Tensor::zeros(DataType::Float, {1, 1, 3, 3})}};
    EXPECT_EQ(runOneNodeTensor(tooSmall).shape(), (Shape{1, 1, 0, 0}));
}

TEST(ConvOps, MismatchedChannelsAreAnErrorNamingTheNode) {
    OneNodeSpec spec{"Conv",
                     "",
                     17,
                     {Tensor::zeros(DataType::Float, {1, 3, 4, 4}),
                      Tensor::zeros(DataType::Float, {2, 2, 3, 3})}};
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("under_test"), std::string::npos);
    EXPECT_NE(result.error().message.find("channels"), std::string::npos);

    OneNodeSpec badBias{
        "Conv",
        "",
        17,
        {Tensor::zeros(DataType::Float, {1, 2, 4, 4}), Tensor::zeros(DataType::Float, {2, 2, 3, 3}),
         Tensor::zeros(DataType::Float, {3})}};
    EXPECT_FALSE(runOneNode(badBias));
    OneNodeSpec badRank{
        "Conv",
        "",
        17,
        {Tensor::zeros(DataType::Float, {4, 4}), Tensor::zeros(DataType::Float, {2, 2})}};
    EXPECT_FALSE(runOneNode(badRank));
}

struct TransposeCase {
    Shape x, w;  // w: [C, M/group, k...]
    std::vector<std::int64_t> strides, pads, dilations, outputPadding;
    std::int64_t group = 1;
};

// Scatter definition: every input pixel adds its weighted kernel into the output.
Tensor referenceConvTranspose(const TransposeCase& c, const std::vector<double>& x,
                              const std::vector<double>& w, const std::vector<double>& b) {
    const std::size_t rank = c.x.size() - 2;
    const std::int64_t mg = c.w[1], cg = c.x[1] / c.group;
    auto attr = [](const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
        return v.empty() ? fallback : v[i];
    };
    Shape out{c.x[0], mg * c.group};
    for (std::size_t d = 0; d < rank; ++d)
        out.push_back(attr(c.strides, d, 1) * (c.x[d + 2] - 1) + attr(c.outputPadding, d, 0) +
                      (c.w[d + 2] - 1) * attr(c.dilations, d, 1) + 1 - attr(c.pads, d, 0) -
                      attr(c.pads, d + rank, 0));
    std::vector<double> y(static_cast<std::size_t>(engine::shapeElementCount(out)), 0.0);
    forEachIndex(out, [&](const Shape& o) { y[flatIndex(out, o)] = b[o[1]]; });
    Shape kernel(c.w.begin() + 2, c.w.end());
    forEachIndex(c.x, [&](const Shape& xi) {
        const std::int64_t g = xi[1] / cg;
        for (std::int64_t m = 0; m < mg; ++m)
            forEachIndex(kernel, [&](const Shape& k) {
                Shape oi{xi[0], g * mg + m};
                for (std::size_t d = 0; d < rank; ++d) {
                    const std::int64_t pos = xi[d + 2] * attr(c.strides, d, 1) -
                                             attr(c.pads, d, 0) + k[d] * attr(c.dilations, d, 1);
                    if (pos < 0 || pos >= out[d + 2]) return;
                    oi.push_back(pos);
                }
                Shape wi{xi[1], m};
                wi.insert(wi.end(), k.begin(), k.end());
                y[flatIndex(out, oi)] += x[flatIndex(c.x, xi)] * w[flatIndex(c.w, wi)];
            });
    });
    return makeTensor<double>(out, y);
}

// float runs oneDNN's deconvolution where the build has it (and the padding allows), double
// the Eigen GEMM + col2im path.
template <class T>
void checkConvTranspose(const TransposeCase& c, unsigned seed) {
    const auto x = randomValues(engine::shapeElementCount(c.x), seed);
    const auto w = randomValues(engine::shapeElementCount(c.w), seed + 1);
    const auto b = randomValues(c.w[1] * c.group, seed + 2);
    OneNodeSpec spec{
        "ConvTranspose",
        "",
        17,
        {tensorOf<T>(c.x, x), tensorOf<T>(c.w, w), tensorOf<T>({c.w[1] * c.group}, b)}};
    spec.attributes = [&](onnx::NodeProto& node) {
        if (!c.strides.empty()) setAttr(node, "strides", c.strides);
        if (!c.pads.empty()) setAttr(node, "pads", c.pads);
        if (!c.dilations.empty()) setAttr(node, "dilations", c.dilations);
        if (!c.outputPadding.empty()) setAttr(node, "output_padding", c.outputPadding);
        setAttr(node, "group", c.group);
    };
    Tensor actual = runOneNodeTensor(spec);
    ASSERT_TRUE(actual.defined());
    EXPECT_TRUE(tensorsClose(actual.castTo(DataType::Double), referenceConvTranspose(c, x, w, b),
                             {1e-4, 1e-5}));
}

TEST(ConvOps, ConvTransposeMatchesScatterDefinition) {
    const std::vector<TransposeCase> cases = {
        {{1, 2, 3, 4}, {2, 3, 3, 3}, {2, 2}, {}, {}, {}, 1},
        {{2, 4, 3, 3}, {4, 1, 2, 3}, {2, 1}, {1, 0, 0, 1}, {1, 2}, {1, 0}, 2},
        {{1, 3, 5}, {3, 2, 4}, {3}, {1, 2}, {}, {2}, 1},
        {{1, 2, 2, 3, 2}, {2, 2, 2, 2, 3}, {1, 2, 2}, {}, {}, {}, 1},
        {{1, 6, 4, 5}, {6, 2, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, {}, 3},
        {{1, 2, 3, 3, 2}, {2, 1, 2, 2, 2}, {2, 1, 2}, {0, 1, 0, 1, 0, 1}, {}, {}, 2},
    };
    unsigned seed = 100;
    for (const auto& c : cases) {
        checkConvTranspose<float>(c, seed += 3);
        checkConvTranspose<double>(c, seed += 3);
    }
}

TEST(ConvOps, ConvTransposeOutputShapeExtendsTheEnd) {
    // x [1 2], kernel [1 1], stride 2: natural output [1 1 2 2]; output_shape 5 appends a zero.
    OneNodeSpec spec{"ConvTranspose",
                     "",
                     17,
                     {makeTensor<float>({1, 1, 2}, {1, 2}), makeTensor<float>({1, 1, 2}, {1, 1})}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "strides", std::vector<std::int64_t>{2});
        setAttr(n, "output_shape", std::vector<std::int64_t>{5});
    };
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 1, 5}, {1, 1, 2, 2, 0})));
    // SAME_UPPER: output = input * stride = 4, total padding 0 here.
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "strides", std::vector<std::int64_t>{2});
        setAttr(n, "auto_pad", std::string("SAME_UPPER"));
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 1, 4}, {1, 1, 2, 2})));
}

TEST(ConvOps, ConvTransposeRejectsMismatchedWeights) {
    OneNodeSpec spec{"ConvTranspose",
                     "",
                     17,
                     {Tensor::zeros(DataType::Float, {1, 3, 4, 4}),
                      Tensor::zeros(DataType::Float, {2, 1, 3, 3})}};
    EXPECT_FALSE(runOneNode(spec));
}

TEST(ConvOps, ConvIntegerSubtractsPerChannelZeroPoints) {
    // x int8 [1 2 3] (zero point 1 -> [0 1 2]); two filters of width 2 with zero points 0 and 2.
    OneNodeSpec spec{"ConvInteger",
                     "",
                     17,
                     {makeTensor<std::int8_t>({1, 1, 3}, {1, 2, 3}),
                      makeTensor<std::int8_t>({2, 1, 2}, {1, 1, 3, 4}),
                      makeTensor<std::int8_t>({}, {1}), makeTensor<std::int8_t>({2}, {0, 2})}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "pads", std::vector<std::int64_t>{1, 0});
    };
    // Filter 0 = [1 1], filter 1 = [1 2]; padded centered x = [0 0 1 2].
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::Int32);
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::int32_t>({1, 2, 3}, {0, 1, 3, 0, 2, 5})));
}

TEST(ConvOps, QLinearConvRequantizesWithRoundHalfToEven) {
    // acc = x * w = [1 2 3 5] * 1; scale x*w/y = 0.5 -> [0.5 1 1.5 2.5] -> [0 1 2 2] + zp 10.
    OneNodeSpec spec{
        "QLinearConv",
        "",
        17,
        {makeTensor<std::uint8_t>({1, 1, 2, 2}, {1, 2, 3, 5}), makeTensor<float>({}, {1.0f}),
         makeTensor<std::uint8_t>({}, {0}), makeTensor<std::uint8_t>({1, 1, 1, 1}, {1}),
         makeTensor<float>({}, {0.5f}), makeTensor<std::uint8_t>({}, {0}),
         makeTensor<float>({}, {1.0f}), makeTensor<std::uint8_t>({}, {10})}};
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.dtype(), DataType::UInt8);
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::uint8_t>({1, 1, 2, 2}, {10, 11, 12, 12})));
}

TEST(ConvOps, QLinearConvSaturates) {
    OneNodeSpec spec{
        "QLinearConv",
        "",
        17,
        {makeTensor<std::int8_t>({1, 1, 1, 2}, {100, -100}), makeTensor<float>({}, {1.0f}),
         makeTensor<std::int8_t>({}, {0}), makeTensor<std::int8_t>({1, 1, 1, 1}, {100}),
         makeTensor<float>({}, {1.0f}), makeTensor<std::int8_t>({}, {0}),
         makeTensor<float>({}, {1.0f}), makeTensor<std::int8_t>({}, {0})}};
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<std::int8_t>({1, 1, 1, 2}, {127, -128})));
}

}  // namespace
}  // namespace onnxlens::testing

namespace onnxlens::testing {
namespace {

// Splitting work over the pool (column tiles, planes, output channels) must not change results.
TEST(ConvOps, ThreadedRunsMatchSingleThreadedRuns) {
    const Shape xs{2, 4, 40, 50};
    const auto x = randomValues(engine::shapeElementCount(xs), 7);
    const auto w = randomValues(8 * 4 * 3 * 3, 8);
    const auto dw = randomValues(4 * 1 * 3 * 3, 9);
    const auto tw = randomValues(4 * 2 * 3 * 3, 10);
    const std::vector<OneNodeSpec> specs = {
        {"Conv", "", 17, {tensorOf<double>(xs, x), tensorOf<double>({8, 4, 3, 3}, w)}},
        {"Conv",
         "",
         17,
         {tensorOf<double>(xs, x), tensorOf<double>({4, 1, 3, 3}, dw)},
         1,
         [](onnx::NodeProto& n) { setAttr(n, "group", std::int64_t{4}); }},
        {"ConvTranspose",
         "",
         17,
         {tensorOf<double>(xs, x), tensorOf<double>({4, 2, 3, 3}, tw)},
         1,
         [](onnx::NodeProto& n) {
             setAttr(n, "strides", std::vector<std::int64_t>{2, 2});
         }},
    };
    for (const auto& spec : specs) {
        auto single = runOneNode(spec, 1), threaded = runOneNode(spec, 3);
        ASSERT_TRUE(single && threaded);
        EXPECT_TRUE(tensorsClose(threaded->at(0).tensor(), single->at(0).tensor(), {1e-12, 1e-12}))
            << spec.opType;
    }
}

}  // namespace
}  // namespace onnxlens::testing
