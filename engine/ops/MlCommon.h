#pragma once
// What the ai.onnx.ml kernels share: the post transforms of classifier and regressor scores,
// class labels (int64 or string), and reading the numeric attributes that ml opset 3 may give
// as tensors instead (`nodes_values_as_tensor`, ...).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "onnxlens/engine/Kernel.h"

namespace onnxlens::engine::ops::ml {

enum class PostTransform { None, Softmax, Logistic, SoftmaxZero, Probit };

inline PostTransform parsePostTransform(const NodeInfo& node) {
    const std::string name = node.getString("post_transform", "NONE");
    if (name == "NONE") return PostTransform::None;
    if (name == "SOFTMAX") return PostTransform::Softmax;
    if (name == "LOGISTIC") return PostTransform::Logistic;
    if (name == "SOFTMAX_ZERO") return PostTransform::SoftmaxZero;
    if (name == "PROBIT") return PostTransform::Probit;
    throw EngineError(node.opType() + ": unknown post_transform '" + name + "'");
}

inline double logistic(double x) {
    return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

// The inverse error function: a rational first guess refined by two Newton steps on std::erf,
// so probit scores are accurate to double precision rather than to the guess.
inline double erfInverse(double y) {
    if (y <= -1) return -INFINITY;
    if (y >= 1) return INFINITY;
    const double w = -std::log((1.0 - y) * (1.0 + y));
    double x;
    if (w < 5.0) {
        const double v = w - 2.5;
        double p = 2.81022636e-08;
        for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941})
            p = c + p * v;
        x = p * y;
    } else {
        const double v = std::sqrt(w) - 3.0;
        double p = -0.000200214257;
        for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682})
            p = c + p * v;
        x = p * y;
    }
    const double twoOverSqrtPi = 1.1283791670955126;
    for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (twoOverSqrtPi * std::exp(-x * x));
    return x;
}
inline double probit(double p) { return std::sqrt(2.0) * erfInverse(2.0 * p - 1.0); }

// Applies the transform to one row of scores in place.
template <class T>
void applyPostTransform(PostTransform transform, T* scores, std::size_t n) {
    switch (transform) {
        case PostTransform::None:
            return;
        case PostTransform::Logistic:
            for (std::size_t i = 0; i < n; ++i) scores[i] = static_cast<T>(logistic(scores[i]));
            return;
        case PostTransform::Probit:
            for (std::size_t i = 0; i < n; ++i) scores[i] = static_cast<T>(probit(scores[i]));
            return;
        case PostTransform::Softmax:
        case PostTransform::SoftmaxZero: {
            // SOFTMAX_ZERO leaves zero scores at zero: a class no tree voted for stays impossible.
            const bool keepZeros = transform == PostTransform::SoftmaxZero;
            T maximum = -INFINITY;
            for (std::size_t i = 0; i < n; ++i)
                if (!keepZeros || scores[i] != 0) maximum = std::max(maximum, scores[i]);
            double sum = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (keepZeros && scores[i] == 0) continue;
                scores[i] = static_cast<T>(std::exp(static_cast<double>(scores[i] - maximum)));
                sum += scores[i];
            }
            if (sum > 0)
                for (std::size_t i = 0; i < n; ++i) scores[i] = static_cast<T>(scores[i] / sum);
            return;
        }
    }
}

// Class labels of a classifier: classlabels_int64s / classlabels_ints or classlabels_strings.
struct ClassLabels {
    bool strings = false;
    std::vector<std::int64_t> ints;
    std::vector<std::string> names;

    static ClassLabels read(const NodeInfo& node, const char* intsName) {
        ClassLabels labels;
        labels.names = node.getStrings("classlabels_strings");
        labels.ints = node.getInts(intsName);
        labels.strings = !labels.names.empty();
        if (labels.strings && !labels.ints.empty())
            throw EngineError(node.opType() + ": both classlabels_strings and " + intsName +
                              " are set");
        return labels;
    }
    std::size_t size() const { return strings ? names.size() : ints.size(); }
    // Y: one label per row, int64 or string.
    Tensor allocate(std::int64_t rows) const {
        return Tensor(strings ? DataType::String : DataType::Int64, {rows});
    }
    // Writes label `index` at `row`; an index past the labels writes the index itself (or its
    // decimal string), which is what a classifier without labels reports.
    void write(Tensor& y, std::int64_t row, std::int64_t index) const {
        if (strings) {
            y.data<std::string>()[row] =
                index >= 0 && static_cast<std::size_t>(index) < names.size()
                    ? names[static_cast<std::size_t>(index)]
                    : std::to_string(index);
        } else {
            y.data<std::int64_t>()[row] =
                index >= 0 && static_cast<std::size_t>(index) < ints.size()
                    ? ints[static_cast<std::size_t>(index)]
                    : index;
        }
    }
};

// A FLOATS attribute, or its `<name>_as_tensor` twin of ml opset 3 (float or double), as doubles.
inline std::vector<double> floatsOrTensor(const NodeInfo& node, const std::string& name) {
    if (auto t = node.getTensor(name + "_as_tensor")) {
        std::vector<double> out(static_cast<std::size_t>(t->numel()));
        for (std::int64_t i = 0; i < t->numel(); ++i)
            out[static_cast<std::size_t>(i)] = t->valueAsDouble(i);
        return out;
    }
    auto floats = node.getFloats(name);
    return {floats.begin(), floats.end()};
}

// The ml operators take float, double, int64 or int32 features and compute in float (double
// stays double).
inline Tensor featuresAsFloatOrDouble(const Tensor& x) {
    if (x.dtype() == DataType::Float || x.dtype() == DataType::Double) return x;
    if (!isInteger(x.dtype()))
        throw EngineError(std::string("features of type ") + dataTypeName(x.dtype()) +
                          " are not supported");
    return x.castTo(DataType::Float);
}

// Rows and features of a [N, F] (or [F], one row) input.
struct RowShape {
    std::int64_t rows, features;
};
inline RowShape rowShapeOf(const Tensor& x) {
    if (x.rank() == 0) return {1, 1};
    if (x.rank() == 1) return {1, x.dim(0)};
    return {x.dim(0), x.numel() / std::max<std::int64_t>(1, x.dim(0))};
}

}  // namespace onnxlens::engine::ops::ml
