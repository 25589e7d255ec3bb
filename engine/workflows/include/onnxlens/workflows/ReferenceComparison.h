#pragma once
// Comparing an output with its reference: |actual - expected| <= atol + rtol * |expected|,
// NaN equals NaN, integers/bools/strings exactly (the design's data conventions).
#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/workflows/TensorStatistics.h"
#include "onnxlens/engine/Value.h"

namespace onnxlens::engine {

struct Tolerance {
    double rtol = 1e-3;
    double atol = 1e-5;
};

struct ComparisonResult {
    bool passed = false;
    std::string problem;              // why it failed ("dtype float32 vs float64", ...); empty on pass
    double maxAbsError = 0;
    double maxRelError = 0;
    double meanAbsError = 0;
    double fractionOutside = 0;       // share of elements outside tolerance
    std::int64_t outsideCount = 0;
    std::int64_t elementCount = 0;
    std::vector<std::int64_t> worstIndex;  // multi-index of the largest absolute error
    double worstActual = 0, worstExpected = 0;
};

ComparisonResult compareValues(const Value& actual, const Value& expected,
                               const Tolerance& tolerance = {});
ComparisonResult compareTensors(const Tensor& actual, const Tensor& expected,
                                const Tolerance& tolerance = {});

// |actual - expected| per element of two numeric tensors of the same dtype and shape, binned
// (NaN against NaN is 0; other non-finite differences are left out). Empty when the tensors are
// not comparable element by element.
Histogram absoluteErrorHistogram(const Tensor& actual, const Tensor& expected, int bins = 40);

}  // namespace onnxlens::engine
