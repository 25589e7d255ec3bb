// Resize, Upsample and GridSample on small inputs with hand-derived expectations.
#include <gtest/gtest.h>

#include <cmath>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

using Strings = std::vector<std::pair<std::string, std::string>>;

// Resize-13 of `x` with scales (or sizes when `bySizes`) and string attributes.
OneNodeSpec resize(Tensor x, std::vector<float> scales, Strings attrs, bool bySizes = false,
                   std::vector<std::int64_t> sizes = {}, std::vector<float> roi = {}) {
    OneNodeSpec spec{"Resize", "", 13, {std::move(x)}};
    spec.inputs.push_back(
        roi.empty() ? Value()
                    : Value(makeTensor<float>({static_cast<std::int64_t>(roi.size())}, roi)));
    if (bySizes) {
        spec.inputs.push_back(Value());
        spec.inputs.push_back(
            makeTensor<std::int64_t>({static_cast<std::int64_t>(sizes.size())}, sizes));
    } else {
        spec.inputs.push_back(
            makeTensor<float>({static_cast<std::int64_t>(scales.size())}, scales));
    }
    spec.attributes = [attrs](onnx::NodeProto& n) {
        for (const auto& [k, v] : attrs) setAttr(n, k, v);
    };
    return spec;
}

TEST(ResizeOps, NearestModesOnUpsampling) {
    // 1-D [10 20 30] x 2, asymmetric: source x / 2 = 0, .5, 1, 1.5, 2, 2.5.
    Tensor x = makeTensor<float>({3}, {10, 20, 30});
    auto run = [&](const std::string& nearest) {
        return runOneNodeTensor(resize(
            x, {2}, {{"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", nearest}}));
    };
    EXPECT_TRUE(tensorsClose(run("floor"), makeTensor<float>({6}, {10, 10, 20, 20, 30, 30})));
    EXPECT_TRUE(tensorsClose(run("ceil"), makeTensor<float>({6}, {10, 20, 20, 30, 30, 30})));
    EXPECT_TRUE(
        tensorsClose(run("round_prefer_floor"), makeTensor<float>({6}, {10, 10, 20, 20, 30, 30})));
    EXPECT_TRUE(
        tensorsClose(run("round_prefer_ceil"), makeTensor<float>({6}, {10, 20, 20, 30, 30, 30})));
}

TEST(ResizeOps, LinearCoordinateTransforms) {
    Tensor x = makeTensor<float>({1, 1, 1, 2}, {0, 8});
    // align_corners to width 5: source 0, .25, .5, .75, 1 of the input span.
    auto aligned =
        resize(x, {}, {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}},
               true, {1, 1, 1, 5});
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(aligned), makeTensor<float>({1, 1, 1, 5}, {0, 2, 4, 6, 8})));
    // half_pixel x2: source -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
    auto half = resize(x, {1, 1, 1, 2}, {{"mode", "linear"}});
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(half), makeTensor<float>({1, 1, 1, 4}, {0, 2, 6, 8})));
}

TEST(ResizeOps, CubicMatchesTheKeysKernel) {
    // Upsampling a line by 2 with asymmetric coordinates: odd outputs sit halfway, where the
    // cubic weights with a = -0.75 are (-0.09375, 0.59375, 0.59375, -0.09375).
    Tensor x = makeTensor<double>({4}, {0, 1, 4, 9});
    auto spec =
        resize(x, {2}, {{"mode", "cubic"}, {"coordinate_transformation_mode", "asymmetric"}});
    Tensor y = runOneNodeTensor(spec);
    ASSERT_EQ(y.shape(), (Shape{8}));
    const double* v = y.data<double>();
    EXPECT_NEAR(v[2], 1.0, 1e-12);  // exact sample
    EXPECT_NEAR(v[3], -0.09375 * 0 + 0.59375 * 1 + 0.59375 * 4 - 0.09375 * 9, 1e-12);
}

TEST(ResizeOps, CropAndResizeExtrapolates) {
    // roi [0.5, 1.5] of a 3-long line, 3 outputs: source 1, 2, 3 -> the last is outside.
    Tensor x = makeTensor<float>({3}, {1, 2, 3});
    auto spec = resize(
        x, {}, {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}}, true,
        {3}, {0.5f, 1.5f});
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "mode", std::string("linear"));
        setAttr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
        setAttr(n, "extrapolation_value", -1.0f);
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({3}, {2, 3, -1})));
}

TEST(ResizeOps, IntegerNearestAndEmptyInputs) {
    Tensor x = makeTensor<std::uint8_t>({1, 2}, {7, 250});
    Tensor y = runOneNodeTensor(resize(x, {1, 2}, {}));
    ASSERT_EQ(y.dtype(), DataType::UInt8);
    EXPECT_TRUE(tensorsClose(y, makeTensor<std::uint8_t>({1, 4}, {7, 7, 250, 250})));
    Tensor empty = runOneNodeTensor(resize(Tensor(DataType::Float, {0, 3}), {1, 2}, {}));
    EXPECT_EQ(empty.shape(), (Shape{0, 6}));
}

TEST(ResizeOps, ScalesAndSizesTogetherOrMissingAreErrors) {
    OneNodeSpec both{"Resize",
                     "",
                     13,
                     {makeTensor<float>({2}, {1, 2}), Value(), makeTensor<float>({1}, {2}),
                      makeTensor<std::int64_t>({1}, {4})}};
    EXPECT_FALSE(runOneNode(both));
    OneNodeSpec neither{"Resize", "", 13, {makeTensor<float>({2}, {1, 2})}};
    EXPECT_FALSE(runOneNode(neither));
    EXPECT_FALSE(runOneNode(resize(makeTensor<float>({2}, {1, 2}), {1, 2}, {})));  // rank mismatch
}

TEST(ResizeOps, UpsampleOpset7UsesTheScalesAttribute) {
    OneNodeSpec spec{"Upsample", "", 7, {makeTensor<float>({1, 2}, {1, 2})}};
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "scales", std::vector<float>{1, 3}); };
    EXPECT_TRUE(
        tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 6}, {1, 1, 1, 2, 2, 2})));
}

TEST(ResizeOps, Resize10IsAsymmetricFloor) {
    OneNodeSpec spec{
        "Resize", "", 10, {makeTensor<float>({3}, {1, 2, 3}), makeTensor<float>({1}, {1.5f})}};
    // 4 outputs at x / 1.5 = 0, 0.67, 1.33, 2 -> floor 0, 0, 1, 2.
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({4}, {1, 1, 2, 3})));
}

// Grid for GridSample: pixel centres of an HxW image as normalized (x, y) pairs.
Tensor pixelCentreGrid(std::int64_t H, std::int64_t W, bool alignCorners, double shiftX = 0) {
    std::vector<float> g;
    for (std::int64_t y = 0; y < H; ++y)
        for (std::int64_t x = 0; x < W; ++x) {
            auto norm = [&](double p, std::int64_t size) {
                return alignCorners ? 2 * p / (size - 1) - 1 : (2 * p + 1) / size - 1;
            };
            g.push_back(static_cast<float>(norm(static_cast<double>(x) + shiftX, W)));
            g.push_back(static_cast<float>(norm(static_cast<double>(y), H)));
        }
    return makeTensor<float>({1, H, W, 2}, g);
}

TEST(ResizeOps, GridSampleIdentityGridReturnsTheInput) {
    Tensor x = makeTensor<float>({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
    for (bool align : {false, true})
        for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
            OneNodeSpec spec{"GridSample", "", 16, {x, pixelCentreGrid(2, 3, align)}};
            spec.attributes = [&](onnx::NodeProto& n) {
                setAttr(n, "mode", std::string(mode));
                setAttr(n, "align_corners", static_cast<std::int64_t>(align));
            };
            EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), x)) << mode << " align " << align;
        }
}

TEST(ResizeOps, GridSample20SamplesVolumesAndLines) {
    // A 2x2x2 volume 0..7 (z, y, x row-major); grid points are (x, y, z) with align_corners.
    Tensor volume = makeTensor<float>({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    Tensor grid = makeTensor<float>({1, 1, 1, 4, 3}, {0, 0, 0,       // centre: mean of all 8
                                                      -1, -1, -1,    // first voxel
                                                      1, -1, -1,     // x = 1: voxel (0, 0, 1)
                                                      -1, 1, 0.5});  // y = 1, z 3/4 of the way
    auto sample = [&](const char* mode, Tensor x, Tensor g) {
        OneNodeSpec spec{"GridSample", "", 20, {std::move(x), std::move(g)}};
        spec.attributes = [mode](onnx::NodeProto& n) {
            setAttr(n, "mode", std::string(mode));
            setAttr(n, "align_corners", std::int64_t{1});
        };
        return runOneNodeTensor(spec);
    };
    // Last point: x=0, y=1 -> voxels 2 (z=0) and 6 (z=1), z = 0.75 -> 2 + 0.75 * 4 = 5.
    EXPECT_TRUE(tensorsClose(sample("linear", volume, grid),
                             makeTensor<float>({1, 1, 1, 1, 4}, {3.5f, 0, 1, 5})));
    // Nearest rounds half to even: the centre (0.5, 0.5, 0.5) reads voxel 0.
    EXPECT_TRUE(tensorsClose(sample("nearest", volume, grid),
                             makeTensor<float>({1, 1, 1, 1, 4}, {0, 0, 1, 6})));
    // One spatial dim: a line of 3, sampled at its middle between samples 1 and 2.
    Tensor line = makeTensor<float>({1, 1, 3}, {10, 20, 40});
    EXPECT_TRUE(tensorsClose(sample("linear", line, makeTensor<float>({1, 1, 1}, {0.5f})),
                             makeTensor<float>({1, 1, 1}, {30})));
    // Cubic stays 2-D.
    OneNodeSpec cubic{"GridSample", "", 20, {volume, grid}};
    cubic.attributes = [](onnx::NodeProto& n) { setAttr(n, "mode", std::string("cubic")); };
    auto refused = runOneNode(cubic);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("4-D"), std::string::npos) << refused.error().message;
}

TEST(ResizeOps, GridSamplePaddingModes) {
    // Shift every sample by 1.5 pixels right: the last column reads beyond the input.
    Tensor x = makeTensor<float>({1, 1, 2, 3}, {1, 2, 3, 1, 2, 3});
    auto run = [&](const std::string& padding) {
        OneNodeSpec spec{"GridSample", "", 16, {x, pixelCentreGrid(2, 3, true, 0.5)}};
        spec.attributes = [padding](onnx::NodeProto& n) {
            setAttr(n, "align_corners", std::int64_t{1});
            setAttr(n, "padding_mode", padding);
        };
        return runOneNodeTensor(spec);
    };
    // Both rows are [1 2 3]; sources x = 0.5, 1.5, 2.5.
    EXPECT_TRUE(
        tensorsClose(run("border"), makeTensor<float>({1, 1, 2, 3}, {1.5, 2.5, 3, 1.5, 2.5, 3})));
    EXPECT_TRUE(tensorsClose(run("zeros"),
                             makeTensor<float>({1, 1, 2, 3}, {1.5, 2.5, 1.5, 1.5, 2.5, 1.5})));
    // Reflection about x = 2 maps 2.5 to 1.5.
    EXPECT_TRUE(tensorsClose(run("reflection"),
                             makeTensor<float>({1, 1, 2, 3}, {1.5, 2.5, 2.5, 1.5, 2.5, 2.5})));
}

TEST(ResizeOps, GridSampleRejectsMismatchedGrid) {
    OneNodeSpec spec{"GridSample",
                     "",
                     16,
                     {Tensor::zeros(DataType::Float, {1, 1, 2, 2}),
                      Tensor::zeros(DataType::Float, {2, 2, 2, 2})}};
    EXPECT_FALSE(runOneNode(spec));
}

}  // namespace
}  // namespace onnxlens::testing

namespace onnxlens::testing {
namespace {

TEST(ResizeOps, Opset18AxesAndKeepAspectRatio) {
    // Sizes for axes (2, 3) only; not_larger fits 4x8 into 2x2 with one common scale 0.25 -> 1x2.
    Tensor x = Tensor::zeros(DataType::Float, {1, 1, 4, 8});
    OneNodeSpec spec{
        "Resize", "", 18, {x, Value(), Value(), makeTensor<std::int64_t>({2}, {2, 2})}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "axes", std::vector<std::int64_t>{2, 3});
        setAttr(n, "keep_aspect_ratio_policy", std::string("not_larger"));
    };
    auto result = runOneNode(spec);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->at(0).tensor().shape(), (Shape{1, 1, 1, 2}));
}

// Resize-18/19 with string and integer attributes and scales (opset `opset`).
Tensor resizeAt(int opset, Tensor x, std::vector<float> scales, Strings attrs,
                std::int64_t antialias) {
    OneNodeSpec spec{"Resize",
                     "",
                     opset,
                     {std::move(x), Value(),
                      makeTensor<float>({static_cast<std::int64_t>(scales.size())}, scales)}};
    spec.attributes = [attrs, antialias](onnx::NodeProto& n) {
        for (const auto& [k, v] : attrs) setAttr(n, k, v);
        setAttr(n, "antialias", antialias);
    };
    return runOneNodeTensor(spec);
}

TEST(ResizeOps, Opset18LinearAntialiasIsAStretchedTent) {
    // Halving [0..7], half_pixel: source 2j + 0.5; the tent of half-width 2 gives taps at
    // 2j-1..2j+2 with weights (1/4, 3/4, 3/4, 1/4) / 2; the edge repeats the first/last value.
    // j=0: (0*1 + 0*3 + 1*3 + 2*1) / 8 = 0.625 ... j=3: (5 + 18 + 21 + 7) / 8 = 6.375.
    Tensor x = makeTensor<float>({8}, {0, 1, 2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(tensorsClose(resizeAt(18, x, {0.5f}, {{"mode", "linear"}}, 1),
                             makeTensor<float>({4}, {0.625f, 2.5f, 4.5f, 6.375f})));
    // Without antialias the same halving reads two samples: (2j + 2j+1) / 2.
    EXPECT_TRUE(tensorsClose(resizeAt(18, x, {0.5f}, {{"mode", "linear"}}, 0),
                             makeTensor<float>({4}, {0.5f, 2.5f, 4.5f, 6.5f})));
    // Upsampling is not antialiased: the same as without the attribute.
    Tensor small = makeTensor<float>({1, 1, 1, 2}, {0, 8});
    EXPECT_TRUE(tensorsClose(resizeAt(18, small, {1, 1, 1, 2}, {{"mode", "linear"}}, 1),
                             makeTensor<float>({1, 1, 1, 4}, {0, 2, 6, 8})));
}

TEST(ResizeOps, Opset18CubicAntialiasKeepsConstantsAndInteriorRamps) {
    // The normalised stretched cubic (8 taps at scale 1/2, symmetric around a half-pixel source)
    // keeps a constant and reproduces a ramp away from the edges: out[j] = 2j + 0.5.
    std::vector<float> ramp(16);
    for (int i = 0; i < 16; ++i) ramp[i] = static_cast<float>(i);
    Tensor y = resizeAt(18, makeTensor<float>({1, 16}, ramp), {1, 0.5f}, {{"mode", "cubic"}}, 1);
    ASSERT_EQ(y.shape(), (Shape{1, 8}));
    for (int j = 2; j < 6; ++j) EXPECT_NEAR(y.data<float>()[j], 2 * j + 0.5, 1e-5) << j;
    Tensor c = resizeAt(18, makeTensor<float>({3, 9}, std::vector<float>(27, 2.5f)), {0.34f, 0.34f},
                        {{"mode", "cubic"}}, 1);
    for (std::int64_t i = 0; i < c.numel(); ++i) EXPECT_NEAR(c.data<float>()[i], 2.5, 1e-5);
}

TEST(ResizeOps, Opset19HalfPixelSymmetricCentresTheRoundedOutput) {
    // 5 samples at scale 1/2: 2.5 outputs rounded down to 2. half_pixel maps output x to
    // 2x + 0.5; half_pixel_symmetric shifts by (5/2) * (1 - 2/2.5) = 0.5 to 2x + 1.
    Tensor x = makeTensor<float>({5}, {10, 20, 30, 40, 50});
    EXPECT_TRUE(tensorsClose(
        resizeAt(19, x, {0.5f}, {{"coordinate_transformation_mode", "half_pixel_symmetric"}}, 0),
        makeTensor<float>({2}, {20, 40})));
    EXPECT_TRUE(
        tensorsClose(resizeAt(19, x, {0.5f}, {{"coordinate_transformation_mode", "half_pixel"}}, 0),
                     makeTensor<float>({2}, {10, 30})));
    EXPECT_TRUE(tensorsClose(
        resizeAt(19, x, {0.5f},
                 {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel_symmetric"}},
                 0),
        makeTensor<float>({2}, {20, 40})));
}

TEST(ResizeOps, ThreadedRunsMatchSingleThreadedRuns) {
    std::vector<float> values(3 * 30 * 40);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 101);
    OneNodeSpec spec =
        resize(makeTensor<float>({1, 3, 30, 40}, values), {1, 1, 1.7f, 0.6f}, {{"mode", "cubic"}});
    auto single = runOneNode(spec, 1), threaded = runOneNode(spec, 3);
    ASSERT_TRUE(single && threaded);
    EXPECT_TRUE(tensorsClose(threaded->at(0).tensor(), single->at(0).tensor(), {1e-6, 1e-6}));
}

}  // namespace
}  // namespace onnxlens::testing

namespace onnxlens::testing {
namespace {

TEST(ResizeOps, NonFiniteCoordinatesGiveZerosOrExtrapolation) {
    const float nan = std::nanf("");
    OneNodeSpec grid{"GridSample",
                     "",
                     16,
                     {makeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
                      makeTensor<float>({1, 1, 2, 2}, {nan, 0, 1e30f, -1e30f})}};
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(grid), makeTensor<float>({1, 1, 1, 2}, {0, 0})));
    auto crop = resize(makeTensor<float>({2}, {1, 2}), {}, {}, true, {2}, {nan, 1});
    crop.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
        setAttr(n, "extrapolation_value", 7.0f);
    };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(crop), makeTensor<float>({2}, {7, 7})));
}

}  // namespace
}  // namespace onnxlens::testing
