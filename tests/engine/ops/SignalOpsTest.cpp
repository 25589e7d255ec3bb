// DFT and STFT against a direct O(n^2) transform, the windows against their formulas, and
// MelWeightMatrix against its defining properties.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

using Complex = std::complex<double>;

std::vector<Complex> directDft(const std::vector<Complex>& x, std::size_t n, bool inverse) {
    std::vector<Complex> out(n);
    const double sign = inverse ? 1.0 : -1.0;
    for (std::size_t k = 0; k < n; ++k) {
        Complex sum = 0;
        for (std::size_t j = 0; j < std::min(n, x.size()); ++j)
            sum += x[j] *
                   std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(j * k) / n);
        out[k] = inverse ? sum / static_cast<double>(n) : sum;
    }
    return out;
}

// Packs complex values as [..., 2] floats.
std::vector<float> interleave(const std::vector<Complex>& v, std::size_t count) {
    std::vector<float> out;
    for (std::size_t i = 0; i < count; ++i) {
        out.push_back(static_cast<float>(v[i].real()));
        out.push_back(static_cast<float>(v[i].imag()));
    }
    return out;
}

TEST(SignalOps, DftOfRealSignalWithPaddingAndOnesided) {
    const std::vector<Complex> x{1, 2, -1, 0.5, 3};
    std::vector<float> real;
    for (auto v : x) real.push_back(static_cast<float>(v.real()));
    // dft_length 8 zero-pads; onesided keeps 8 / 2 + 1 = 5 bins.
    OneNodeSpec spec{
        "DFT", "", 17, {makeTensor<float>({1, 5, 1}, real), makeTensor<std::int64_t>({}, {8})}};
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "onesided", std::int64_t{1}); };
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec),
                             makeTensor<float>({1, 5, 2}, interleave(directDft(x, 8, false), 5)),
                             {1e-4, 1e-4}));
}

TEST(SignalOps, DftInverseOfComplexSignalOnNegativeAxis) {
    // Shape [1, 3, 2(inner), 2(complex)]: transform the length-3 axis (-3 counts the complex dim).
    const std::vector<Complex> a{{1, 1}, {0, 2}, {-1, 0.5}}, b{{2, 0}, {0, 0}, {1, -1}};
    std::vector<float> packed;
    for (int k = 0; k < 3; ++k)
        for (const auto* line : {&a, &b}) {
            packed.push_back(static_cast<float>((*line)[k].real()));
            packed.push_back(static_cast<float>((*line)[k].imag()));
        }
    OneNodeSpec spec{"DFT", "", 17, {makeTensor<float>({1, 3, 2, 2}, packed)}};
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "inverse", std::int64_t{1});
        setAttr(n, "axis", std::int64_t{-3});
    };
    const auto ia = directDft(a, 3, true), ib = directDft(b, 3, true);
    std::vector<float> expected;
    for (int k = 0; k < 3; ++k)
        for (const auto* line : {&ia, &ib}) {
            expected.push_back(static_cast<float>((*line)[k].real()));
            expected.push_back(static_cast<float>((*line)[k].imag()));
        }
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 3, 2, 2}, expected),
                             {1e-4, 1e-5}));
}

TEST(SignalOps, DftRejectsTheComponentAxisAndBadShapes) {
    OneNodeSpec lastAxis{"DFT", "", 17, {Tensor::zeros(DataType::Float, {1, 4, 1})}};
    lastAxis.attributes = [](onnx::NodeProto& n) { setAttr(n, "axis", std::int64_t{2}); };
    EXPECT_FALSE(runOneNode(lastAxis));
    EXPECT_FALSE(runOneNode({"DFT", "", 17, {Tensor::zeros(DataType::Float, {1, 4, 3})}}));
}

TEST(SignalOps, StftFramesWindowsAndTransforms) {
    // Length 7, frames of 4 every 3 samples -> 2 frames, 3 onesided bins.
    const std::vector<float> signal{1, -2, 3, 0.5f, 2, -1, 4};
    const std::vector<float> window{0.5f, 1, 1, 0.5f};
    OneNodeSpec spec{"STFT",
                     "",
                     17,
                     {makeTensor<float>({1, 7, 1}, signal), makeTensor<std::int64_t>({}, {3}),
                      makeTensor<float>({4}, window)}};
    std::vector<float> expected;
    for (int frame = 0; frame < 2; ++frame) {
        std::vector<Complex> x;
        for (int k = 0; k < 4; ++k) x.emplace_back(signal[frame * 3 + k] * window[k], 0);
        const auto spectrum = interleave(directDft(x, 4, false), 3);
        expected.insert(expected.end(), spectrum.begin(), spectrum.end());
    }
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), makeTensor<float>({1, 2, 3, 2}, expected),
                             {1e-4, 1e-5}));
}

TEST(SignalOps, StftRejectsFrameLengthThatDisagreesWithTheWindow) {
    OneNodeSpec spec{"STFT",
                     "",
                     17,
                     {Tensor::zeros(DataType::Float, {1, 8, 1}), makeTensor<std::int64_t>({}, {2}),
                      Tensor::zeros(DataType::Float, {4}), makeTensor<std::int64_t>({}, {5})}};
    EXPECT_FALSE(runOneNode(spec));
}

TEST(SignalOps, WindowsFollowTheirFormulas) {
    const double pi = std::numbers::pi;
    auto run = [](const std::string& op, std::int64_t periodic, std::int64_t type = 1) {
        OneNodeSpec spec{op, "", 17, {makeTensor<std::int64_t>({}, {5})}};
        spec.attributes = [periodic, type](onnx::NodeProto& n) {
            setAttr(n, "periodic", periodic);
            setAttr(n, "output_datatype", type);
        };
        return runOneNodeTensor(spec);
    };
    std::vector<float> hannPeriodic, hammingSymmetric, blackman;
    for (int k = 0; k < 5; ++k) {
        hannPeriodic.push_back(static_cast<float>(std::pow(std::sin(pi * k / 5), 2)));
        hammingSymmetric.push_back(
            static_cast<float>(25.0 / 46 - 21.0 / 46 * std::cos(2 * pi * k / 4)));
        blackman.push_back(static_cast<float>(0.42 - 0.5 * std::cos(2 * pi * k / 5) +
                                              0.08 * std::cos(4 * pi * k / 5)));
    }
    EXPECT_TRUE(tensorsClose(run("HannWindow", 1), makeTensor<float>({5}, hannPeriodic)));
    EXPECT_TRUE(tensorsClose(run("HammingWindow", 0), makeTensor<float>({5}, hammingSymmetric)));
    EXPECT_TRUE(tensorsClose(run("BlackmanWindow", 1), makeTensor<float>({5}, blackman)));
    EXPECT_EQ(run("HannWindow", 1, 11).dtype(), DataType::Double);
    EXPECT_EQ(run("HannWindow", 1, 11).shape(), (Shape{5}));
}

TEST(SignalOps, MelWeightMatrixIsABankOfUnitPeakTriangles) {
    OneNodeSpec spec{"MelWeightMatrix",
                     "",
                     17,
                     {makeTensor<std::int32_t>({}, {6}), makeTensor<std::int32_t>({}, {64}),
                      makeTensor<std::int32_t>({}, {16000}), makeTensor<float>({}, {100}),
                      makeTensor<float>({}, {6000})}};
    Tensor m = runOneNodeTensor(spec);
    ASSERT_EQ(m.shape(), (Shape{33, 6}));
    const float* v = m.data<float>();
    std::int64_t previousPeak = -1;
    for (std::int64_t filter = 0; filter < 6; ++filter) {
        float peak = 0;
        std::int64_t peakRow = 0;
        for (std::int64_t row = 0; row < 33; ++row) {
            const float w = v[row * 6 + filter];
            EXPECT_GE(w, 0.0f);
            EXPECT_LE(w, 1.0f);
            if (w > peak) peak = w, peakRow = row;
        }
        EXPECT_FLOAT_EQ(peak, 1.0f) << "filter " << filter;
        EXPECT_GT(peakRow, previousPeak) << "mel filters move up in frequency";
        previousPeak = peakRow;
        // Mel spacing widens: no filter reaches above 6000 Hz, bin 64 * 6000 / 16000 = 24.
        for (std::int64_t row = 26; row < 33; ++row) EXPECT_EQ(v[row * 6 + filter], 0.0f);
    }
}

}  // namespace
}  // namespace onnxlens::testing
