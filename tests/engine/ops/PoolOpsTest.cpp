// Pooling kernels on small inputs whose results are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

using Ints = std::vector<std::int64_t>;

OneNodeSpec pool(const std::string& op, Tensor x, std::function<void(onnx::NodeProto&)> attrs,
                 int outputs = 1) {
    OneNodeSpec spec{op, "", 17, {std::move(x)}, outputs};
    spec.attributes = std::move(attrs);
    return spec;
}

TEST(PoolOps, MaxPoolWithRowAndColumnMajorIndices) {
    // 2x3 plane [[1 5 2] [7 3 4]] (batch 1, 2 channels, second = first + 10), kernel 2x2.
    Tensor x = makeTensor<float>({1, 2, 2, 3}, {1, 5, 2, 7, 3, 4, 11, 15, 12, 17, 13, 14});
    auto attrs = [](std::int64_t order) {
        return [order](onnx::NodeProto& n) {
            setAttr(n, "kernel_shape", Ints{2, 2});
            setAttr(n, "storage_order", order);
        };
    };
    auto rowMajor = runOneNode(pool("MaxPool", x, attrs(0), 2));
    ASSERT_TRUE(rowMajor) << rowMajor.error().message;
    // Windows: cols 0-1 -> max 7 at (1,0); cols 1-2 -> max 5 at (0,1).
    EXPECT_TRUE(
        tensorsClose(rowMajor->at(0).tensor(), makeTensor<float>({1, 2, 1, 2}, {7, 5, 17, 15})));
    // Row-major: (1,0) -> 3, (0,1) -> 1; the second plane is offset by 6.
    EXPECT_TRUE(tensorsClose(rowMajor->at(1).tensor(),
                             makeTensor<std::int64_t>({1, 2, 1, 2}, {3, 1, 9, 7})));
    auto columnMajor = runOneNode(pool("MaxPool", x, attrs(1), 2));
    ASSERT_TRUE(columnMajor);
    // Column-major (h + w * H): (1,0) -> 1, (0,1) -> 2.
    EXPECT_TRUE(tensorsClose(columnMajor->at(1).tensor(),
                             makeTensor<std::int64_t>({1, 2, 1, 2}, {1, 2, 7, 8})));
}

TEST(PoolOps, MaxPoolPadsNeverWinAndIntegersWork) {
    // Negative values with padding: pads are ignored rather than read as zero.
    Tensor x = makeTensor<std::int8_t>({1, 1, 3}, {-5, -3, -4});
    auto spec = pool("MaxPool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{2});
        setAttr(n, "pads", Ints{1, 1});
    });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<std::int8_t>({1, 1, 4}, {-5, -3, -3, -4})));
}

// A hostile kernel of 31,457,279 columns over 24 (+4 padded): an empty output, returned at once
// (the row kernel walked every column of the kernel for every row: 38 s under the sanitizers;
// fuzz regression maxpool_kernel_of_31m_columns_empty_output).
TEST(PoolOps, HugeKernelWithAnEmptyOutputReturnsAtOnce) {
    Tensor x(DataType::Float, {1, 3, 28, 24});
    for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7);
    auto y = runOneNodeTensor(pool("MaxPool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{3, 31457279});
        setAttr(n, "pads", Ints{2, 2, 2, 2});
    }));
    EXPECT_EQ(y.shape(), (Shape{1, 3, 30, 0}));
    // And a kernel wider than the input whose windows still overlap it: every output is the
    // row maximum of its rows.
    auto wide = runOneNodeTensor(pool("MaxPool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{1, 1000});
        setAttr(n, "pads", Ints{0, 500, 0, 500});
    }));
    ASSERT_EQ(wide.shape(), (Shape{1, 3, 28, 25}));
    for (std::int64_t i = 0; i < wide.numel(); ++i) EXPECT_EQ(wide.data<float>()[i], 6.0f) << i;
}

// 2-D float MaxPool without indices takes a row-folding kernel; the double path keeps the
// per-window taps: both give the same values on every geometry here (pads larger than some
// windows' reach, strides, ceil_mode, windows all in the padding, negative values, NaN).
TEST(PoolOps, FloatRowKernelEqualsTheWindowTapsOnEveryGeometry) {
    struct Geometry {
        Ints kernel, strides, pads;
        std::int64_t ceil;
    };
    const std::vector<Geometry> geometries = {
        {{3, 3}, {2, 2}, {1, 1, 1, 1}, 0},  // ResNet's stem pool
        {{2, 2}, {2, 2}, {0, 0, 0, 0}, 0}, {{3, 2}, {1, 3}, {2, 0, 1, 1}, 1},
        {{1, 4}, {2, 1}, {0, 3, 0, 3}, 0},  // columns entirely in the padding
        {{5, 5}, {3, 3}, {2, 2, 2, 2}, 1},
    };
    const std::int64_t h = 9, w = 11;
    std::vector<float> values(static_cast<std::size_t>(2 * 3 * h * w));
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>((i * 37) % 101) - 60.0f;
    values[17] = std::nanf("");
    std::vector<double> doubles(values.begin(), values.end());
    for (const Geometry& geometry : geometries) {
        auto attrs = [&](onnx::NodeProto& n) {
            setAttr(n, "kernel_shape", geometry.kernel);
            setAttr(n, "strides", geometry.strides);
            setAttr(n, "pads", geometry.pads);
            setAttr(n, "ceil_mode", geometry.ceil);
        };
        const Tensor f =
            runOneNodeTensor(pool("MaxPool", makeTensor<float>({2, 3, h, w}, values), attrs));
        const Tensor d =
            runOneNodeTensor(pool("MaxPool", makeTensor<double>({2, 3, h, w}, doubles), attrs));
        ASSERT_EQ(f.shape(), d.shape());
        for (std::int64_t i = 0; i < f.numel(); ++i)
            ASSERT_EQ(static_cast<double>(f.data<float>()[i]), d.data<double>()[i]) << i;
    }
}

// 1-D pools over a sweep of kernels, strides, dilations, pads and ceil_mode, against a reference
// that walks the input positions (not the kernel taps): which positions a window reads and how
// many of its taps lie inside the padded input (count_include_pad's divisor). The last geometry
// is a hostile kernel of 2,000,001 taps dilated by 3 whose 64 windows each keep about 21 taps.
TEST(PoolOps, OneDimensionalWindowsMatchAWalkOverTheInput) {
    struct Geometry {
        std::int64_t kernel, stride, dilation, padBegin, padEnd, ceil;
    };
    const std::vector<Geometry> geometries = {
        {3, 1, 1, 0, 0, 0}, {3, 2, 1, 1, 1, 0},
        {4, 3, 2, 3, 2, 1}, {2, 2, 3, 2, 0, 1},
        {5, 1, 2, 4, 4, 0}, {7, 4, 1, 6, 3, 1},
        {1, 5, 1, 0, 4, 1}, {2000001, 1, 3, 3000000, 3000000, 0},
    };
    const std::int64_t in = 64;
    std::vector<float> values(static_cast<std::size_t>(in));
    for (std::int64_t i = 0; i < in; ++i)
        values[static_cast<std::size_t>(i)] = static_cast<float>((i * 29) % 23) - 9.0f;
    const Tensor x = makeTensor<float>({1, 1, in}, values);
    for (const Geometry& g : geometries) {
        const bool huge = g.kernel > 1000;
        for (std::int64_t include : {std::int64_t{0}, std::int64_t{1}}) {
            if (huge && include == 1) continue;  // the reference's divisor walks the taps
            auto attrs = [&](onnx::NodeProto& n) {
                setAttr(n, "kernel_shape", Ints{g.kernel});
                setAttr(n, "strides", Ints{g.stride});
                setAttr(n, "dilations", Ints{g.dilation});
                setAttr(n, "pads", Ints{g.padBegin, g.padEnd});
                setAttr(n, "ceil_mode", g.ceil);
                setAttr(n, "count_include_pad", include);
            };
            const Tensor average = runOneNodeTensor(pool("AveragePool", x, attrs));
            const Tensor maximum = runOneNodeTensor(pool("MaxPool", x, [&](onnx::NodeProto& n) {
                setAttr(n, "kernel_shape", Ints{g.kernel});
                setAttr(n, "strides", Ints{g.stride});
                setAttr(n, "dilations", Ints{g.dilation});
                setAttr(n, "pads", Ints{g.padBegin, g.padEnd});
                setAttr(n, "ceil_mode", g.ceil);
            }));
            ASSERT_EQ(average.shape(), maximum.shape());
            const std::int64_t outputs = average.shape()[2];
            ASSERT_GT(outputs, 0);
            for (std::int64_t o = 0; o < outputs; ++o) {
                const std::int64_t start = o * g.stride - g.padBegin;
                double sum = 0;
                float most = -INFINITY;
                std::int64_t inside = 0;
                for (std::int64_t i = 0; i < in; ++i) {
                    const std::int64_t offset = i - start;
                    if (offset < 0 || offset % g.dilation != 0 || offset / g.dilation >= g.kernel)
                        continue;
                    sum += values[static_cast<std::size_t>(i)];
                    most = std::max(most, values[static_cast<std::size_t>(i)]);
                    ++inside;
                }
                std::int64_t padded = 0;
                if (include == 1)
                    for (std::int64_t k = 0; k < g.kernel; ++k)
                        if (start + k * g.dilation < in + g.padEnd) ++padded;
                if (inside == 0) continue;  // a window wholly in the padding: no reference value
                const double divisor = static_cast<double>(include == 1 ? padded : inside);
                EXPECT_NEAR(average.data<float>()[o], sum / divisor, 1e-5)
                    << "kernel " << g.kernel << " dilation " << g.dilation << " output " << o;
                EXPECT_EQ(maximum.data<float>()[o], most)
                    << "kernel " << g.kernel << " output " << o;
            }
        }
    }
}

TEST(PoolOps, MaxPoolDilationsAndCeilMode) {
    Tensor x = makeTensor<float>({1, 1, 6}, {1, 9, 2, 8, 3, 7});
    // kernel 2, dilation 2: windows {0,2} {1,3} {2,4} {3,5}.
    auto dilated = pool("MaxPool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{2});
        setAttr(n, "dilations", Ints{2});
    });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(dilated), makeTensor<float>({1, 1, 4}, {2, 9, 3, 8})));
    // kernel 2, stride 2 on 5 values: floor gives 2 windows, ceil adds the partial window {4}.
    Tensor five = makeTensor<float>({1, 1, 5}, {1, 2, 3, 4, 5});
    auto ceil = pool("MaxPool", five, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{2});
        setAttr(n, "strides", Ints{2});
        setAttr(n, "ceil_mode", std::int64_t{1});
    });
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(ceil), makeTensor<float>({1, 1, 3}, {2, 4, 5})));
}

TEST(PoolOps, AveragePoolCountIncludePad) {
    Tensor x = makeTensor<float>({1, 1, 3}, {3, 6, 9});
    auto spec = [&](std::int64_t include) {
        return pool("AveragePool", x, [include](onnx::NodeProto& n) {
            setAttr(n, "kernel_shape", Ints{2});
            setAttr(n, "pads", Ints{1, 1});
            setAttr(n, "count_include_pad", include);
        });
    };
    // Windows [pad 3] [3 6] [6 9] [9 pad].
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec(0)), makeTensor<float>({1, 1, 4}, {3, 4.5, 7.5, 9})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec(1)),
                             makeTensor<float>({1, 1, 4}, {1.5, 4.5, 7.5, 4.5})));
}

TEST(PoolOps, AveragePoolSameLowerOn2D) {
    // 2x2 input, kernel 2x2, SAME_LOWER: the pad goes first, so output (0,0) sees only x(0,0).
    Tensor x = makeTensor<double>({1, 1, 2, 2}, {1, 2, 3, 4});
    auto spec = pool("AveragePool", x, [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{2, 2});
        setAttr(n, "auto_pad", std::string("SAME_LOWER"));
    });
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<double>({1, 1, 2, 2}, {1, 1.5, 2, 2.5})));
}

TEST(PoolOps, LpPoolNorms) {
    Tensor x = makeTensor<float>({1, 1, 4}, {3, -4, 0, 1});
    auto spec = [&](std::int64_t p) {
        return pool("LpPool", x, [p](onnx::NodeProto& n) {
            setAttr(n, "kernel_shape", Ints{2});
            setAttr(n, "strides", Ints{2});
            setAttr(n, "p", p);
        });
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec(2)), makeTensor<float>({1, 1, 2}, {5, 1})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec(1)), makeTensor<float>({1, 1, 2}, {7, 1})));
}

TEST(PoolOps, GlobalPools) {
    Tensor x = makeTensor<float>({2, 1, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
    EXPECT_TRUE(tensorsClose(runOneNodeTensor({"GlobalAveragePool", "", 17, {x}}),
                             makeTensor<float>({2, 1, 1, 1}, {3, -2.5})));
    EXPECT_TRUE(tensorsClose(runOneNodeTensor({"GlobalMaxPool", "", 17, {x}}),
                             makeTensor<float>({2, 1, 1, 1}, {6, -1})));
    OneNodeSpec lp{"GlobalLpPool", "", 17, {makeTensor<float>({1, 1, 2}, {6, 8})}};
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(lp), makeTensor<float>({1, 1, 1}, {10})));
    // Zero-size batch keeps its shape.
    EXPECT_EQ(
        runOneNodeTensor({"GlobalAveragePool", "", 17, {Tensor(DataType::Float, {0, 3, 4, 4})}})
            .shape(),
        (Shape{0, 3, 1, 1}));
}

TEST(PoolOps, MaxUnpoolInvertsMaxPoolIndices) {
    Tensor x = makeTensor<float>({1, 1, 2, 4}, {1, 8, 2, 3, 4, 5, 9, 6});
    auto attrs = [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", Ints{2, 2});
        setAttr(n, "strides", Ints{2, 2});
    };
    auto pooled = runOneNode(pool("MaxPool", x, attrs, 2));
    ASSERT_TRUE(pooled);
    OneNodeSpec unpool{"MaxUnpool", "", 17, {pooled->at(0).tensor(), pooled->at(1).tensor()}};
    unpool.attributes = attrs;
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(unpool),
                             makeTensor<float>({1, 1, 2, 4}, {0, 8, 0, 0, 0, 0, 9, 0})));
}

TEST(PoolOps, MaxUnpoolRejectsIndicesOutsideTheOutput) {
    OneNodeSpec spec{
        "MaxUnpool",
        "",
        17,
        {makeTensor<float>({1, 1, 1, 1}, {1}), makeTensor<std::int64_t>({1, 1, 1, 1}, {4})}};
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "kernel_shape", Ints{2, 2}); };
    auto result = runOneNode(spec);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("outside"), std::string::npos);
}

TEST(PoolOps, MaxRoiPoolTakesTheMaxPerBin) {
    // 4x4 ramp (value = 4*y + x); roi covering x 0..3, y 0..1 pooled to 1x2.
    std::vector<float> ramp(16);
    for (int i = 0; i < 16; ++i) ramp[i] = static_cast<float>(i);
    OneNodeSpec spec{
        "MaxRoiPool",
        "",
        17,
        {makeTensor<float>({1, 1, 4, 4}, ramp), makeTensor<float>({1, 5}, {0, 0, 0, 3, 1})}};
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "pooled_shape", Ints{1, 2}); };
    // Bins: x 0..1 -> max at (1,1) = 5; x 2..3 -> max at (1,3) = 7.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 1, 1, 2}, {5, 7})));
}

TEST(PoolOps, MissingKernelShapeOrBadRankIsAnError) {
    EXPECT_FALSE(
        runOneNode(pool("MaxPool", Tensor::zeros(DataType::Float, {1, 1, 4, 4}), nullptr)));
    EXPECT_FALSE(runOneNode(pool("AveragePool", Tensor::zeros(DataType::Float, {4, 4}),
                                 [](onnx::NodeProto& n) { setAttr(n, "kernel_shape", Ints{2}); })));
    EXPECT_FALSE(runOneNode(pool("MaxPool", Tensor::zeros(DataType::Float, {1, 1, 4, 4}),
                                 [](onnx::NodeProto& n) { setAttr(n, "kernel_shape", Ints{2}); })));
}

}  // namespace
}  // namespace onnxlens::testing
