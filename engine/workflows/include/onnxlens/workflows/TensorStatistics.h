#pragma once
// Figures a person reads off a run's output: statistics over the finite elements, NaN and Inf
// counts, an equal-width histogram, and the top-k classes of a 2-D logits tensor. Shared by the
// Run panel and anything else that summarizes a tensor without a window.
#include <cstdint>
#include <span>
#include <vector>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine {

struct TensorStatistics {
    std::int64_t count = 0;        // every element
    std::int64_t finiteCount = 0;  // the ones min/max/mean/std are computed over
    std::int64_t nanCount = 0;
    std::int64_t infCount = 0;
    double min = 0, max = 0, mean = 0, std = 0;  // population std
    bool numeric = false;  // false for strings (and complex): only `count` is filled
};

struct Histogram {
    double low = 0, high = 0;          // the range the bins cover (finite values only)
    std::vector<std::int64_t> counts;  // equal-width bins over [low, high]; the last one is closed
    double binWidth() const {
        return counts.empty() ? 0.0 : (high - low) / static_cast<double>(counts.size());
    }
    std::int64_t total() const;
};

struct TopKEntry {
    std::int64_t index = 0;  // class index within the row
    double score = 0;        // the raw value
    double probability = 0;  // softmax over the row
};

// Numeric and bool tensors; strings and complex numbers only count their elements.
TensorStatistics computeTensorStatistics(const Tensor& tensor);

// Finite values only; an empty histogram when there are none. All equal values land in bin 0.
Histogram histogramOf(const Tensor& tensor, int bins = 40);
Histogram histogramOfValues(std::span<const double> values, int bins = 40);

// True for a rank-2 floating-point tensor with at least two columns ([batch, classes]).
bool looksLikeLogits(const Tensor& tensor);
// The k largest entries of `row` of a rank-2 tensor, largest first (ties: lower index first).
// Throws EngineError when the tensor is not rank 2 numeric or the row is out of range.
std::vector<TopKEntry> topK(const Tensor& tensor, int k = 5, std::int64_t row = 0);

// Calls f(double) for every element of a numeric or bool tensor, in row-major order; returns false
// (calling nothing) for other types.
template <class F>
bool forEachAsDouble(const Tensor& tensor, F&& f) {
    if (tensor.dtype() == DataType::String || tensor.dtype() == DataType::Complex64 ||
        tensor.dtype() == DataType::Complex128 || !tensor.defined())
        return false;
    if (isLowPrecision(tensor.dtype())) {  // float8, 4-bit, e8m0: decoded values
        for (std::int64_t i = 0; i < tensor.numel(); ++i) f(tensor.valueAsDouble(i));
        return true;
    }
    dispatchNumericOrBool(tensor.dtype(), [&]<class T>() {
        for (const T& v : tensor.span<T>()) f(toDouble(v));
    });
    return true;
}

}  // namespace onnxlens::engine
