// Statistics, histograms and top-k of run outputs; the absolute-error histogram of a comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "onnxlens/workflows/ReferenceComparison.h"
#include "onnxlens/workflows/TensorStatistics.h"

using namespace onnxlens::engine;

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST(TensorStatistics, FiniteFiguresAndNonFiniteCounts) {
    Tensor t = Tensor::fromVector<float>({2, 4}, {1, 2, 3, 4, kNaN, -kInf, 10, kInf});
    TensorStatistics s = computeTensorStatistics(t);
    EXPECT_TRUE(s.numeric);
    EXPECT_EQ(s.count, 8);
    EXPECT_EQ(s.finiteCount, 5);
    EXPECT_EQ(s.nanCount, 1);
    EXPECT_EQ(s.infCount, 2);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 10);
    EXPECT_DOUBLE_EQ(s.mean, 4);  // (1+2+3+4+10)/5
    const double variance = (9 + 4 + 1 + 0 + 36) / 5.0;
    EXPECT_NEAR(s.std, std::sqrt(variance), 1e-12);
}

TEST(TensorStatistics, IntegersBoolsAndStrings) {
    auto ints = computeTensorStatistics(Tensor::fromVector<std::int64_t>({3}, {-5, 0, 5}));
    EXPECT_DOUBLE_EQ(ints.min, -5);
    EXPECT_DOUBLE_EQ(ints.mean, 0);
    auto bools = computeTensorStatistics(Tensor::fromVector<bool>({4}, {true, false, true, true}));
    EXPECT_DOUBLE_EQ(bools.mean, 0.75);
    auto strings = computeTensorStatistics(Tensor::fromVector<std::string>({2}, {"a", "b"}));
    EXPECT_FALSE(strings.numeric);
    EXPECT_EQ(strings.count, 2);
}

TEST(TensorStatistics, HistogramCoversTheFiniteRange) {
    Tensor t = Tensor::fromVector<float>({6}, {0, 1, 2, 3, 4, kNaN});
    Histogram h = histogramOf(t, 4);
    EXPECT_DOUBLE_EQ(h.low, 0);
    EXPECT_DOUBLE_EQ(h.high, 4);
    ASSERT_EQ(h.counts.size(), 4u);
    // bins of width 1: [0,1) [1,2) [2,3) [3,4]; the maximum lands in the last, closed bin
    EXPECT_EQ(h.counts, (std::vector<std::int64_t>{1, 1, 1, 2}));
    EXPECT_EQ(h.total(), 5);
    Histogram constant = histogramOf(Tensor::fromVector<float>({3}, {7, 7, 7}), 10);
    EXPECT_EQ(constant.counts[0], 3);
    EXPECT_TRUE(histogramOf(Tensor::fromVector<float>({1}, {kNaN})).counts.empty());
}

TEST(TensorStatistics, TopFiveOfALogitsRowWithSoftmaxScores) {
    std::vector<float> values(2 * 8, 0.0f);
    const float row1[8] = {0.5f, 3.0f, -1.0f, 3.0f, 2.0f, 7.0f, 1.0f, 0.0f};
    std::copy(row1, row1 + 8, values.begin() + 8);
    Tensor logits = Tensor::fromVector<float>({2, 8}, values);
    ASSERT_TRUE(looksLikeLogits(logits));
    auto top = topK(logits, 5, 1);
    ASSERT_EQ(top.size(), 5u);
    const std::int64_t expected[5] = {5, 1, 3, 4, 6};  // the tie 3.0 at 1 and 3: lower index first
    double denominator = 0;
    for (float v : row1) denominator += std::exp(static_cast<double>(v) - 7.0);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(top[static_cast<std::size_t>(i)].index, expected[i]);
        EXPECT_DOUBLE_EQ(top[static_cast<std::size_t>(i)].score, row1[expected[i]]);
        EXPECT_NEAR(top[static_cast<std::size_t>(i)].probability,
                    std::exp(static_cast<double>(row1[expected[i]]) - 7.0) / denominator, 1e-12);
    }
    EXPECT_EQ(topK(logits, 20, 0).size(), 8u);  // k larger than the classes
    EXPECT_THROW(topK(logits, 5, 2), EngineError);
    EXPECT_FALSE(looksLikeLogits(Tensor::fromVector<float>({8}, std::vector<float>(8, 1.0f))));
}

TEST(ReferenceComparison, AbsoluteErrorHistogram) {
    Tensor expected = Tensor::fromVector<float>({2, 2}, {1, 2, 3, kNaN});
    Tensor actual = Tensor::fromVector<float>({2, 2}, {1, 2.5f, 5, kNaN});
    Histogram h = absoluteErrorHistogram(actual, expected, 4);
    EXPECT_DOUBLE_EQ(h.low, 0);
    EXPECT_DOUBLE_EQ(h.high, 2);
    EXPECT_EQ(h.total(), 4);  // errors 0, 0.5, 2 and NaN-vs-NaN 0
    EXPECT_EQ(h.counts[0], 2);
    EXPECT_EQ(h.counts[1], 1);
    EXPECT_EQ(h.counts[3], 1);
    EXPECT_TRUE(absoluteErrorHistogram(actual, Tensor::fromVector<float>({4}, {1, 2, 3, 4}))
                    .counts.empty());
}
