#pragma once
// Comparing an output with its reference: |actual - expected| <= atol + rtol * |expected|,
// NaN equals NaN, integers/bools/strings exactly (the design's data conventions).
#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/engine/Value.h"
#include "onnxlens/workflows/TensorStatistics.h"

namespace onnxlens::engine {

struct Tolerance {
    double rtol = 1e-3;
    double atol = 1e-5;
};

struct ComparisonResult {
    bool passed = false;
    std::string problem;  // why it failed ("dtype float32 vs float64", ...); empty on pass
    double maxAbsError = 0;
    double maxRelError = 0;
    double meanAbsError = 0;
    double fractionOutside = 0;  // share of elements outside tolerance
    std::int64_t outsideCount = 0;
    std::int64_t elementCount = 0;
    std::vector<std::int64_t> worstIndex;  // multi-index of the largest absolute error
    double worstActual = 0, worstExpected = 0;
    // Floating-point outputs: cos of the angle between actual and expected as vectors (1 when
    // both are all zeros, 0 when only one is), and what the reference holds.
    double cosineSimilarity = 1;
    double referenceMaxAbs = 0;      // largest |expected| (finite elements)
    bool referenceConstant = false;  // every expected element the same (more than one element)
    bool floating = false;           // compared with a tolerance (float types)
};

// Why passing this comparison proves little, or empty: a floating-point reference whose largest
// magnitude is within the tolerance's atol (or below 1e-6), where even all-zero outputs pass
// ("outputs are ~3e-09: the check cannot tell right from wrong; use real weights or inputs"),
// or one whose elements are all equal. The same rule for `compare`, the Compare dock and the
// export report.
std::string uninformativeReferenceWarning(const ComparisonResult& result,
                                          const Tolerance& tolerance);

// "max abs error 2.9e-15, max rel error 1.2e-06, cosine similarity 1.000000, 0 of 1000
// outside |a - e| <= 1e-05 + 0.001 * |e|": every figure a verdict rests on, in one line.
std::string describeAgreement(const ComparisonResult& result, const Tolerance& tolerance);

ComparisonResult compareValues(const Value& actual, const Value& expected,
                               const Tolerance& tolerance = {});
ComparisonResult compareTensors(const Tensor& actual, const Tensor& expected,
                                const Tolerance& tolerance = {});

// |actual - expected| per element of two numeric tensors of the same dtype and shape, binned
// (NaN against NaN is 0; other non-finite differences are left out). Empty when the tensors are
// not comparable element by element.
Histogram absoluteErrorHistogram(const Tensor& actual, const Tensor& expected, int bins = 40);

}  // namespace onnxlens::engine
