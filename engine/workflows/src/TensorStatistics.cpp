#include "onnxlens/workflows/TensorStatistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace onnxlens::engine {

std::int64_t Histogram::total() const {
    return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

TensorStatistics computeTensorStatistics(const Tensor& tensor) {
    TensorStatistics s;
    s.count = tensor.numel();
    // Welford's update keeps the variance accurate for large tensors with a large mean.
    double mean = 0, m2 = 0;
    s.numeric = forEachAsDouble(tensor, [&](double v) {
        if (std::isnan(v)) {
            ++s.nanCount;
            return;
        }
        if (std::isinf(v)) {
            ++s.infCount;
            return;
        }
        if (s.finiteCount == 0 || v < s.min) s.min = v;
        if (s.finiteCount == 0 || v > s.max) s.max = v;
        ++s.finiteCount;
        const double delta = v - mean;
        mean += delta / static_cast<double>(s.finiteCount);
        m2 += delta * (v - mean);
    });
    if (s.finiteCount > 0) {
        s.mean = mean;
        s.std = std::sqrt(m2 / static_cast<double>(s.finiteCount));
    }
    return s;
}

namespace {

// Two passes over any source of doubles: the finite range, then the counts.
template <class ForEach>
Histogram buildHistogram(ForEach&& forEach, int bins) {
    Histogram h;
    bool any = false;
    forEach([&](double v) {
        if (!std::isfinite(v)) return;
        if (!any || v < h.low) h.low = v;
        if (!any || v > h.high) h.high = v;
        any = true;
    });
    if (!any || bins <= 0) return h;
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    const double width = h.binWidth();
    forEach([&](double v) {
        if (!std::isfinite(v)) return;
        const int bin = width > 0 ? static_cast<int>((v - h.low) / width) : 0;
        ++h.counts[static_cast<std::size_t>(std::clamp(bin, 0, bins - 1))];
    });
    return h;
}

}  // namespace

Histogram histogramOf(const Tensor& tensor, int bins) {
    return buildHistogram([&](auto&& f) { forEachAsDouble(tensor, f); }, bins);
}

Histogram histogramOfValues(std::span<const double> values, int bins) {
    return buildHistogram(
        [&](auto&& f) {
            for (double v : values) f(v);
        },
        bins);
}

bool looksLikeLogits(const Tensor& tensor) {
    return tensor.rank() == 2 && isFloatingPoint(tensor.dtype()) && tensor.dim(1) >= 2;
}

std::vector<TopKEntry> topK(const Tensor& tensor, int k, std::int64_t row) {
    require(tensor.rank() == 2,
            "top-k needs a rank-2 tensor, got " + shapeToString(tensor.shape()));
    require(row >= 0 && row < tensor.dim(0),
            "top-k row " + std::to_string(row) + " is outside " + shapeToString(tensor.shape()));
    const std::int64_t classes = tensor.dim(1);
    std::vector<double> scores;
    scores.reserve(static_cast<std::size_t>(classes));
    std::int64_t i = 0;
    const std::int64_t first = row * classes;
    const bool numeric = forEachAsDouble(tensor, [&](double v) {
        if (i >= first && i < first + classes) scores.push_back(v);
        ++i;
    });
    require(numeric, std::string("top-k needs numbers, got ") + dataTypeName(tensor.dtype()));

    std::vector<std::int64_t> order(static_cast<std::size_t>(classes));
    std::iota(order.begin(), order.end(), 0);
    const auto count = static_cast<std::size_t>(std::clamp<std::int64_t>(k, 0, classes));
    // NaN sorts last so that it never hides a real score.
    auto key = [&](std::int64_t c) {
        double v = scores[static_cast<std::size_t>(c)];
        return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
    };
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count),
                      order.end(), [&](std::int64_t a, std::int64_t b) {
                          return key(a) > key(b) || (key(a) == key(b) && a < b);
                      });

    double maxScore = -std::numeric_limits<double>::infinity();
    for (double v : scores)
        if (std::isfinite(v)) maxScore = std::max(maxScore, v);
    double denominator = 0;
    for (double v : scores)
        if (std::isfinite(v)) denominator += std::exp(v - maxScore);
    std::vector<TopKEntry> top;
    for (std::size_t j = 0; j < count; ++j) {
        const double v = scores[static_cast<std::size_t>(order[j])];
        const double p =
            std::isfinite(v) && denominator > 0 ? std::exp(v - maxScore) / denominator : 0.0;
        top.push_back({order[j], v, p});
    }
    return top;
}

}  // namespace onnxlens::engine
