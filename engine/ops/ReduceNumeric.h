#pragma once
// Accumulator types and conversions for kernels that sum or average elements of any numeric
// type: floating types accumulate in double, integers in 64-bit integers of their signedness.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "onnxlens/engine/DataType.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

template <class T>
constexpr bool isReducedFloat = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
template <class T>
constexpr bool isFloatLike = std::is_floating_point_v<T> || isReducedFloat<T>;

template <class T>
using AccumulatorOf =
    std::conditional_t<isFloatLike<T>, double,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

template <class Acc, class T>
inline Acc toAccumulator(const T& v) {
    if constexpr (isReducedFloat<T>)
        return static_cast<Acc>(static_cast<float>(v));
    else
        return static_cast<Acc>(v);
}

// Converts a double result to T; for integers NaN becomes 0 and values saturate.
template <class T>
inline T fromDouble(double v) {
    if constexpr (isReducedFloat<T>) {
        return T(static_cast<float>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(v);
    } else {
        if (std::isnan(v)) return T(0);
        if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
            return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max()))
            return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    }
}

// Every element of a numeric tensor as double (for small parameter tensors and double math).
inline std::vector<double> elementsAsDoubles(const Tensor& t) {
    std::vector<double> values(static_cast<std::size_t>(t.numel()));
    dispatchNumeric(t.dtype(), [&]<class T>() {
        const T* p = t.data<T>();
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = toAccumulator<double>(p[i]);
    });
    return values;
}

// A floating-point tensor of `type` and `shape` holding `values`.
inline Tensor doublesToTensor(const std::vector<double>& values, DataType type, Shape shape) {
    Tensor t(type, std::move(shape));
    require(static_cast<std::size_t>(t.numel()) == values.size(), [&] {
        return "internal: value count does not match the shape " + shapeToString(t.shape());
    });
    dispatchFloat(type, [&]<class T>() {
        T* p = t.data<T>();
        for (std::size_t i = 0; i < values.size(); ++i) p[i] = fromDouble<T>(values[i]);
    });
    return t;
}

// Sum over `count` consecutive elements of f(double(element)), in double, on eight independent
// partial sums: one running sum is a chain of dependent additions (4 cycles each), which held a
// LayerNormalization of BERT-base's 128 x 768 at 190 us (1 thread, AVX-512); eight lanes let the
// compiler vectorise it.
template <class T, class F>
inline double laneSum(const T* p, std::int64_t count, F f) {
    constexpr int kLanes = 8;
    double lanes[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (int j = 0; j < kLanes; ++j) lanes[j] += f(toAccumulator<double>(p[i + j]));
    double sum = 0;
    for (; i < count; ++i) sum += f(toAccumulator<double>(p[i]));
    for (double lane : lanes) sum += lane;
    return sum;
}

// The mean of `count` (> 0) floats and the mean squared deviation from it, in double on
// laneSum; with `centered` false the mean is taken as 0 (the root-mean-square form).
inline std::pair<double, double> floatMoments(const float* p, std::int64_t count,
                                              bool centered = true) {
    const double n = static_cast<double>(count);
    const double mean = centered ? laneSum(p, count, [](double v) { return v; }) / n : 0.0;
    const double meanSquare =
        laneSum(p, count, [mean](double v) { return (v - mean) * (v - mean); }) / n;
    return {mean, meanSquare};
}

}  // namespace onnxlens::engine::ops
