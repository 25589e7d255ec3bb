#include "onnxlens/workflows/ReferenceComparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "onnxlens/engine/LowPrecisionFloat.h"

namespace onnxlens::engine {

namespace {

std::vector<std::int64_t> unravelIndex(std::int64_t flat, const Shape& shape) {
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (shape[i] > 0) {
            index[i] = flat % shape[i];
            flat /= shape[i];
        }
    }
    return index;
}

// The values of a float8, 4-bit or e8m0 tensor as float32 (exact), for comparison.
Tensor decodedLowPrecision(const Tensor& t) {
    Tensor out(DataType::Float, t.shape());
    const auto* codes = static_cast<const std::uint8_t*>(t.raw());
    float* values = out.data<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
        values[i] = static_cast<float>(lowp::lowPrecisionToDouble(t.dtype(), codes[i]));
    return out;
}

ComparisonResult failed(std::string problem) {
    ComparisonResult r;
    r.passed = false;
    r.problem = std::move(problem);
    return r;
}

}  // namespace

ComparisonResult compareTensors(const Tensor& actual, const Tensor& expected,
                                const Tolerance& tolerance) {
    if (actual.dtype() != expected.dtype())
        return failed(std::string("dtype ") + dataTypeName(actual.dtype()) + ", expected " +
                      dataTypeName(expected.dtype()));
    if (actual.shape() != expected.shape())
        return failed("shape " + shapeToString(actual.shape()) + ", expected " +
                      shapeToString(expected.shape()));
    if (isLowPrecision(actual.dtype()))
        return compareTensors(decodedLowPrecision(actual), decodedLowPrecision(expected),
                              tolerance);
    ComparisonResult r;
    r.elementCount = actual.numel();
    const std::int64_t n = actual.numel();
    std::int64_t worst = -1;
    double sumAbs = 0;

    if (actual.dtype() == DataType::String) {
        const auto* a = actual.data<std::string>();
        const auto* e = expected.data<std::string>();
        for (std::int64_t i = 0; i < n; ++i)
            if (a[i] != e[i]) {
                if (worst < 0) worst = i;
                ++r.outsideCount;
            }
    } else if (actual.dtype() == DataType::Complex64 || actual.dtype() == DataType::Complex128) {
        dispatchAny(actual.dtype(), [&]<class T>() {
            if constexpr (std::is_same_v<T, std::complex<float>> ||
                          std::is_same_v<T, std::complex<double>>) {
                const T* a = actual.data<T>();
                const T* e = expected.data<T>();
                for (std::int64_t i = 0; i < n; ++i) {
                    double diff = std::abs(std::complex<double>(a[i]) - std::complex<double>(e[i]));
                    double mag = std::abs(std::complex<double>(e[i]));
                    sumAbs += diff;
                    if (diff > r.maxAbsError) {
                        r.maxAbsError = diff;
                        worst = i;
                    }
                    if (mag > 0) r.maxRelError = std::max(r.maxRelError, diff / mag);
                    if (diff > tolerance.atol + tolerance.rtol * mag) ++r.outsideCount;
                }
            }
        });
    } else {
        const bool exact = !isFloatingPoint(actual.dtype());
        r.floating = !exact;
        double dot = 0, normA = 0, normE = 0;
        bool constant = n > 1;
        dispatchNumericOrBool(actual.dtype(), [&]<class T>() {
            const T* a = actual.data<T>();
            const T* e = expected.data<T>();
            const double e0 = n > 0 ? toDouble(e[0]) : 0.0;
            for (std::int64_t i = 0; i < n; ++i) {
                const double av = toDouble(a[i]);
                const double ev = toDouble(e[i]);
                if (ev != e0 && !(std::isnan(ev) && std::isnan(e0))) constant = false;
                if (std::isfinite(av) && std::isfinite(ev)) {
                    dot += av * ev;
                    normA += av * av;
                    normE += ev * ev;
                    r.referenceMaxAbs = std::max(r.referenceMaxAbs, std::fabs(ev));
                }
                const bool aNan = std::isnan(av), eNan = std::isnan(ev);
                double diff;
                bool outside;
                if (aNan || eNan) {
                    diff = (aNan && eNan) ? 0.0 : std::numeric_limits<double>::infinity();
                    outside = !(aNan && eNan);
                } else if (std::isinf(av) || std::isinf(ev)) {
                    outside = av != ev;
                    diff = outside ? std::numeric_limits<double>::infinity() : 0.0;
                } else {
                    diff = std::fabs(av - ev);
                    outside = exact ? (a[i] != e[i])
                                    : diff > tolerance.atol + tolerance.rtol * std::fabs(ev);
                }
                if (outside) ++r.outsideCount;
                if (std::isfinite(diff)) sumAbs += diff;
                if (diff > r.maxAbsError || (worst < 0 && outside)) {
                    r.maxAbsError = std::max(r.maxAbsError, diff);
                    worst = i;
                    r.worstActual = av;
                    r.worstExpected = ev;
                }
                if (std::fabs(ev) > 0 && std::isfinite(diff))
                    r.maxRelError = std::max(r.maxRelError, diff / std::fabs(ev));
            }
        });
        r.referenceConstant = constant;
        if (normA > 0 && normE > 0)
            r.cosineSimilarity = dot / (std::sqrt(normA) * std::sqrt(normE));
        else
            r.cosineSimilarity = (normA == 0 && normE == 0) ? 1.0 : 0.0;
    }
    r.meanAbsError = n > 0 ? sumAbs / static_cast<double>(n) : 0.0;
    r.fractionOutside = n > 0 ? static_cast<double>(r.outsideCount) / static_cast<double>(n) : 0.0;
    if (worst >= 0) r.worstIndex = unravelIndex(worst, actual.shape());
    r.passed = r.outsideCount == 0;
    if (!r.passed)
        r.problem = std::to_string(r.outsideCount) + " of " + std::to_string(n) +
                    " elements outside tolerance";
    return r;
}

namespace {

// Maps are equal when they hold the same keys (in any order) with values within tolerance.
ComparisonResult compareMaps(const Value& actual, const Value& expected,
                             const Tolerance& tolerance) {
    if (actual.mapKeyType() != expected.mapKeyType())
        return failed(std::string("map keys ") + dataTypeName(actual.mapKeyType()) + ", expected " +
                      dataTypeName(expected.mapKeyType()));
    const Tensor& ak = actual.mapKeys();
    const Tensor& ek = expected.mapKeys();
    if (ak.numel() != ek.numel())
        return failed("map of " + std::to_string(ak.numel()) + " entries, expected " +
                      std::to_string(ek.numel()));
    // The position in `actual` of each expected key.
    std::vector<std::int64_t> order(static_cast<std::size_t>(ek.numel()), -1);
    bool found = true;
    dispatchAny(ak.dtype(), [&]<class K>() {
        if constexpr (std::is_same_v<K, std::string> || std::is_same_v<K, std::int64_t>) {
            std::map<K, std::int64_t> position;
            for (std::int64_t i = 0; i < ak.numel(); ++i) position[ak.data<K>()[i]] = i;
            for (std::int64_t i = 0; i < ek.numel() && found; ++i) {
                auto it = position.find(ek.data<K>()[i]);
                found = it != position.end();
                if (found) order[static_cast<std::size_t>(i)] = it->second;
            }
        }
    });
    if (!found) return failed("the map's keys differ from the expected keys");
    const Tensor& av = actual.mapValues();
    Tensor reordered(av.dtype(), {ek.numel()});
    dispatchAny(av.dtype(), [&]<class T>() {
        for (std::size_t i = 0; i < order.size(); ++i)
            reordered.data<T>()[i] = av.data<T>()[order[i]];
    });
    return compareTensors(reordered, expected.mapValues(), tolerance);
}

template <class Item, class Compare>
ComparisonResult compareItems(const std::vector<Item>& a, const std::vector<Item>& e,
                              const char* what, Compare compare) {
    if (a.size() != e.size())
        return failed("sequence of " + std::to_string(a.size()) + " " + what + ", expected " +
                      std::to_string(e.size()));
    ComparisonResult total;
    total.passed = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
        ComparisonResult r = compare(a[i], e[i]);
        if (!r.passed && total.passed) {
            total = r;
            total.problem = "sequence item " + std::to_string(i) + ": " + r.problem;
        }
        if (total.passed) {
            total.elementCount += r.elementCount;
            total.maxAbsError = std::max(total.maxAbsError, r.maxAbsError);
            total.maxRelError = std::max(total.maxRelError, r.maxRelError);
        }
    }
    return total;
}

}  // namespace

ComparisonResult compareValues(const Value& actual, const Value& expected,
                               const Tolerance& tolerance) {
    if (actual.kind() != expected.kind())
        return failed(std::string("got ") + valueKindName(actual.kind()) + ", expected " +
                      valueKindName(expected.kind()));
    switch (actual.kind()) {
        case Value::Kind::None: {
            ComparisonResult r;
            r.passed = true;
            return r;
        }
        case Value::Kind::Tensor:
            return compareTensors(actual.tensor(), expected.tensor(), tolerance);
        case Value::Kind::Map:
            return compareMaps(actual, expected, tolerance);
        case Value::Kind::MapSequence:
            return compareItems(
                actual.maps(), expected.maps(), "maps",
                [&](const Value& a, const Value& e) { return compareMaps(a, e, tolerance); });
        case Value::Kind::Sequence:
            break;
    }
    return compareItems(
        actual.sequence(), expected.sequence(), "tensors",
        [&](const Tensor& a, const Tensor& e) { return compareTensors(a, e, tolerance); });
}

std::string uninformativeReferenceWarning(const ComparisonResult& result,
                                          const Tolerance& tolerance) {
    if (!result.floating || result.elementCount == 0) return {};
    char text[256];
    if (result.referenceMaxAbs <= std::max(tolerance.atol, 1e-6)) {
        std::snprintf(text, sizeof text,
                      "outputs are ~%.0e (largest magnitude %.3g, atol %.0e): the check cannot "
                      "tell right from wrong; use real weights or inputs",
                      result.referenceMaxAbs, result.referenceMaxAbs, tolerance.atol);
        return text;
    }
    if (result.referenceConstant) {
        std::snprintf(text, sizeof text,
                      "outputs are constant (every element of magnitude %.6g): the check cannot "
                      "tell right from wrong; use real weights or inputs",
                      result.referenceMaxAbs);
        return text;
    }
    return {};
}

std::string describeAgreement(const ComparisonResult& result, const Tolerance& tolerance) {
    char text[320];
    if (!result.floating) {
        std::snprintf(text, sizeof text, "%lld of %lld elements differ (compared exactly)",
                      static_cast<long long>(result.outsideCount),
                      static_cast<long long>(result.elementCount));
        return text;
    }
    std::snprintf(text, sizeof text,
                  "max abs error %.3g, max rel error %.3g, cosine similarity %.6f, %lld of %lld "
                  "outside |a - e| <= %.0e + %.0e * |e|",
                  result.maxAbsError, result.maxRelError, result.cosineSimilarity,
                  static_cast<long long>(result.outsideCount),
                  static_cast<long long>(result.elementCount), tolerance.atol, tolerance.rtol);
    return text;
}

Histogram absoluteErrorHistogram(const Tensor& actual, const Tensor& expected, int bins) {
    if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) return {};
    std::vector<double> errors;
    errors.reserve(static_cast<std::size_t>(actual.numel()));
    const bool numeric = forEachAsDouble(actual, [&](double a) { errors.push_back(a); });
    if (!numeric) return {};
    std::size_t i = 0;
    forEachAsDouble(expected, [&](double e) {
        double& a = errors[i++];
        a = (std::isnan(a) && std::isnan(e)) ? 0.0 : std::fabs(a - e);
    });
    return histogramOfValues(errors, bins);
}

}  // namespace onnxlens::engine
