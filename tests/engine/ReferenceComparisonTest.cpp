#include <gtest/gtest.h>

#include <cmath>

#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/ReferenceComparison.h"

using namespace onnxlens::engine;

TEST(ReferenceComparison, ToleranceFormula) {
    // |a - e| <= atol + rtol * |e|: with e = 100, rtol 1e-3 allows 0.1 + 1e-5.
    auto e = Tensor::fromVector<float>({2}, {100.0f, 1.0f});
    auto ok = Tensor::fromVector<float>({2}, {100.09f, 1.0005f});
    auto bad = Tensor::fromVector<float>({2}, {100.2f, 1.0f});
    EXPECT_TRUE(compareTensors(ok, e).passed);
    auto r = compareTensors(bad, e);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.outsideCount, 1);
    EXPECT_NEAR(r.maxAbsError, 0.2, 1e-4);
    EXPECT_NEAR(r.fractionOutside, 0.5, 1e-12);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{0}));
}

TEST(ReferenceComparison, NaNEqualsNaNAndInfMustMatch) {
    const float nan = std::nanf("");
    const float inf = INFINITY;
    auto e = Tensor::fromVector<float>({3}, {nan, inf, 1});
    EXPECT_TRUE(compareTensors(Tensor::fromVector<float>({3}, {nan, inf, 1}), e).passed);
    EXPECT_FALSE(compareTensors(Tensor::fromVector<float>({3}, {1, inf, 1}), e).passed);
    EXPECT_FALSE(compareTensors(Tensor::fromVector<float>({3}, {nan, -inf, 1}), e).passed);
}

TEST(ReferenceComparison, IntegersAreExact) {
    auto e = Tensor::fromVector<std::int64_t>({2}, {1000000, 5});
    EXPECT_FALSE(compareTensors(Tensor::fromVector<std::int64_t>({2}, {1000001, 5}), e).passed);
}

TEST(ReferenceComparison, DtypeAndShapeMismatch) {
    auto e = Tensor::fromVector<float>({2}, {1, 2});
    auto r = compareTensors(Tensor::fromVector<double>({2}, {1, 2}), e);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.problem.find("float64"), std::string::npos);
    r = compareTensors(Tensor::fromVector<float>({1, 2}, {1, 2}), e);
    EXPECT_NE(r.problem.find("[1x2]"), std::string::npos);
}

TEST(ReferenceComparison, WorstIndexIsMultiDimensional) {
    auto e = Tensor::fromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0});
    auto a = Tensor::fromVector<float>({2, 3}, {0, 0, 0, 0, 0.5f, 0});
    auto r = compareTensors(a, e);
    EXPECT_EQ(r.worstIndex, (std::vector<std::int64_t>{1, 1}));
    EXPECT_NEAR(r.meanAbsError, 0.5 / 6, 1e-9);
}

TEST(ReferenceComparison, Strings) {
    Tensor a(DataType::String, {1}), e(DataType::String, {1});
    a.data<std::string>()[0] = "x";
    e.data<std::string>()[0] = "y";
    EXPECT_FALSE(compareTensors(a, e).passed);
}

TEST(LatencyStatistics, Percentiles) {
    std::vector<double> samples;
    for (int i = 1; i <= 101; ++i) samples.push_back(i);
    auto s = computeLatencyStatistics(samples);
    EXPECT_EQ(s.runs, 101);
    EXPECT_DOUBLE_EQ(s.minMs, 1);
    EXPECT_DOUBLE_EQ(s.maxMs, 101);
    EXPECT_DOUBLE_EQ(s.medianMs, 51);
    EXPECT_DOUBLE_EQ(s.p90Ms, 91);
    EXPECT_DOUBLE_EQ(s.p99Ms, 100);
    EXPECT_DOUBLE_EQ(s.meanMs, 51);
}

TEST(LatencyStatistics, OpTypeShares) {
    std::vector<std::vector<NodeProfile>> runs = {{{"a", "Conv", 0, 3000000}, {"b", "Relu", 3000000, 1000000}}};
    auto byType = summarizeByOpType(runs);
    ASSERT_EQ(byType.size(), 2u);
    EXPECT_EQ(byType[0].opType, "Conv");
    EXPECT_NEAR(byType[0].share, 0.75, 1e-12);
}
