// Resampling: Resize (opsets 10, 11, 13+), Upsample (7, 9) and GridSample.
// Resize is separable: every mode is a tensor product of 1-D filters, so the kernel resamples one
// axis at a time, each output line a weighted sum of a few input lines (one for nearest, two for
// linear, four for cubic). tf_crop_and_resize extrapolation survives this because the weights of
// every 1-D filter sum to one: a line set to the extrapolation value stays that value.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "OpFamilies.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {

namespace {

enum class Interpolation { Nearest, Linear, Cubic };
enum class CoordinateTransform {
    HalfPixel,
    PytorchHalfPixel,
    AlignCorners,
    Asymmetric,
    TfHalfPixelForNn,
    TfCropAndResize,
    HalfPixelSymmetric
};
enum class NearestRounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class AspectRatioPolicy { Stretch, NotLarger, NotSmaller };

Interpolation parseInterpolation(const std::string& mode) {
    if (mode == "nearest") return Interpolation::Nearest;
    if (mode == "linear" || mode == "bilinear" || mode == "trilinear") return Interpolation::Linear;
    if (mode == "cubic" || mode == "bicubic") return Interpolation::Cubic;
    fail("unsupported resize mode '" + mode + "'");
}

CoordinateTransform parseCoordinateTransform(const std::string& mode) {
    if (mode == "half_pixel") return CoordinateTransform::HalfPixel;
    if (mode == "pytorch_half_pixel") return CoordinateTransform::PytorchHalfPixel;
    if (mode == "align_corners") return CoordinateTransform::AlignCorners;
    if (mode == "asymmetric") return CoordinateTransform::Asymmetric;
    if (mode == "tf_half_pixel_for_nn") return CoordinateTransform::TfHalfPixelForNn;
    if (mode == "tf_crop_and_resize") return CoordinateTransform::TfCropAndResize;
    if (mode == "half_pixel_symmetric") return CoordinateTransform::HalfPixelSymmetric;
    fail("unsupported coordinate_transformation_mode '" + mode + "'");
}

NearestRounding parseNearestRounding(const std::string& mode) {
    if (mode == "round_prefer_floor") return NearestRounding::RoundPreferFloor;
    if (mode == "round_prefer_ceil") return NearestRounding::RoundPreferCeil;
    if (mode == "floor") return NearestRounding::Floor;
    if (mode == "ceil") return NearestRounding::Ceil;
    fail("unsupported nearest_mode '" + mode + "'");
}

AspectRatioPolicy parseAspectRatioPolicy(const std::string& policy) {
    if (policy == "stretch") return AspectRatioPolicy::Stretch;
    if (policy == "not_larger") return AspectRatioPolicy::NotLarger;
    if (policy == "not_smaller") return AspectRatioPolicy::NotSmaller;
    fail("unsupported keep_aspect_ratio_policy '" + policy + "'");
}

struct ResizeSettings {
    Interpolation mode = Interpolation::Nearest;
    CoordinateTransform transform = CoordinateTransform::HalfPixel;
    NearestRounding rounding = NearestRounding::RoundPreferFloor;
    double cubicA = -0.75;
    bool excludeOutside = false;
    bool antialias = false;  // Resize-18: linear and cubic widen their filter when shrinking
    double extrapolation = 0.0;
};

// The 1-D filter of one axis: for output index j, taps [j*width, (j+1)*width) of (index, weight),
// and whether j is extrapolated (tf_crop_and_resize outside the input).
struct AxisFilter {
    std::int64_t inLength = 0, outLength = 0;
    int width = 1;
    std::vector<std::int64_t> index;
    std::vector<double> weight;
    std::vector<char> outside;

    bool isIdentity() const {
        if (inLength != outLength) return false;
        for (std::int64_t j = 0; j < outLength; ++j) {
            if (outside[j]) return false;
            for (int t = 0; t < width; ++t) {
                const double w = weight[j * width + t];
                if (w != 0 && (w != 1 || index[j * width + t] != j)) return false;
            }
        }
        return true;
    }
};

double nearestIndex(double x, NearestRounding rounding) {
    switch (rounding) {
        case NearestRounding::RoundPreferFloor:
            return x == std::floor(x) + 0.5 ? std::floor(x) : std::round(x);
        case NearestRounding::RoundPreferCeil:
            return x == std::floor(x) + 0.5 ? std::ceil(x) : std::round(x);
        case NearestRounding::Floor:
            return std::floor(x);
        case NearestRounding::Ceil:
            return std::ceil(x);
    }
    return x;
}

// The cubic convolution kernel at distance d (zero from 2 on).
double cubicKernel(double d, double a) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

// Taps of the antialiasing filter at `scale` < 1: the linear (tent) or cubic kernel stretched by
// 1/scale, so each output sample averages every input sample it covers. The first tap sits
// `firstOffset` positions from the sample left of the source coordinate.
int antialiasTaps(Interpolation mode, double scale, std::int64_t* firstOffset) {
    const double reach = mode == Interpolation::Linear ? 1.0 : 2.0;
    const auto start = static_cast<std::int64_t>(std::floor(-reach / scale) + 1);
    *firstOffset = start;
    return static_cast<int>(2 - 2 * start);
}

void cubicWeights(double t, double a, double* w) {
    w[0] = cubicKernel(t + 1, a);
    w[1] = cubicKernel(t, a);
    w[2] = cubicKernel(1 - t, a);
    w[3] = cubicKernel(2 - t, a);
}

// Builds one axis' filter. `scale` is the output/input ratio used by the coordinate transform;
// the reference computes the resized length as scale * inLength (not the rounded size).
AxisFilter makeAxisFilter(const ResizeSettings& s, std::int64_t inLength, std::int64_t outLength,
                          double scale, double roiStart, double roiEnd) {
    AxisFilter f;
    f.inLength = inLength;
    f.outLength = outLength;
    f.width = s.mode == Interpolation::Nearest ? 1 : s.mode == Interpolation::Linear ? 2 : 4;
    std::int64_t antialiasOffset = 0;
    const bool antialias = s.antialias && s.mode != Interpolation::Nearest && scale < 1;
    if (antialias) {
        // Bounded by the input: an output sample exists only if scale * inLength >= 1.
        f.width = antialiasTaps(s.mode, scale, &antialiasOffset);
        require(static_cast<double>(f.width) * static_cast<double>(outLength) < 1e9, [&] {
            return "Resize antialias filter of " + std::to_string(f.width) + " taps for " +
                   std::to_string(outLength) + " outputs is too large";
        });
    }
    f.index.assign(static_cast<std::size_t>(outLength * f.width), 0);
    f.weight.assign(static_cast<std::size_t>(outLength * f.width), 0.0);
    f.outside.assign(static_cast<std::size_t>(outLength), 0);
    const double in = static_cast<double>(inLength);
    const double resized = scale * in;
    for (std::int64_t j = 0; j < outLength; ++j) {
        const double x = static_cast<double>(j);
        double src = 0;
        switch (s.transform) {
            case CoordinateTransform::HalfPixel:
                src = (x + 0.5) / scale - 0.5;
                break;
            case CoordinateTransform::PytorchHalfPixel:
                src = outLength > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
                break;
            case CoordinateTransform::AlignCorners:
                src = resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
                break;
            case CoordinateTransform::Asymmetric:
                src = x / scale;
                break;
            case CoordinateTransform::TfHalfPixelForNn:
                src = (x + 0.5) / scale;
                break;
            case CoordinateTransform::HalfPixelSymmetric: {
                // Centres the rounded output on the input when outLength != scale * inLength.
                const double adjustment = static_cast<double>(outLength) / resized;
                src = in / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
                break;
            }
            case CoordinateTransform::TfCropAndResize:
                src = resized == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                                   : x * (roiEnd - roiStart) * (in - 1) / (resized - 1);
                src += roiStart * (in - 1);
                if (!(src >= 0 && src <= in - 1)) {  // also catches a NaN roi
                    f.outside[j] = 1;
                    continue;
                }
                break;
        }
        std::int64_t* idx = &f.index[j * f.width];
        double* w = &f.weight[j * f.width];
        if (s.mode == Interpolation::Nearest) {
            idx[0] = std::clamp<std::int64_t>(
                static_cast<std::int64_t>(nearestIndex(src, s.rounding)), 0, inLength - 1);
            w[0] = 1;
            continue;
        }
        // The window's first position (before clamping) and its weights.
        std::int64_t start = 0;
        if (antialias) {
            // As the reference: the sample left of src, the fraction past it in (0, 1]; the
            // stretched kernel's weights are normalised to sum to one.
            double base = std::floor(src), ratio = src - base;
            if (ratio == 0) {
                base -= 1;
                ratio = 1;
            }
            start = static_cast<std::int64_t>(base) + antialiasOffset;
            double sum = 0;
            for (int k = 0; k < f.width; ++k) {
                const double d = (static_cast<double>(antialiasOffset + k) - ratio) * scale;
                w[k] = s.mode == Interpolation::Linear ? std::clamp(1 - std::abs(d), 0.0, 1.0)
                                                       : cubicKernel(d, s.cubicA);
                sum += w[k];
            }
            if (sum != 0)
                for (int k = 0; k < f.width; ++k) w[k] /= sum;
        } else {
            const double base = std::floor(src);
            const double t = src - base;
            start = static_cast<std::int64_t>(base) - (f.width == 4 ? 1 : 0);
            if (s.mode == Interpolation::Linear) {
                w[0] = 1 - t;
                w[1] = t;
            } else {
                cubicWeights(t, s.cubicA, w);
            }
        }
        // The reference takes the `width` nearest positions of the edge-padded input (padding
        // ceil(width/2)), so far outside the input the window stops at the padding.
        const std::int64_t pad = f.width / 2 + f.width % 2;
        start = std::clamp<std::int64_t>(start, -pad, std::max(-pad, inLength + pad - f.width));
        double kept = 0;
        for (int k = 0; k < f.width; ++k) {
            const std::int64_t position = start + k;
            if (s.excludeOutside && (position < 0 || position >= inLength)) w[k] = 0;
            kept += w[k];
            idx[k] = std::clamp<std::int64_t>(position, 0, inLength - 1);
        }
        if (s.excludeOutside && kept != 0)
            for (int k = 0; k < f.width; ++k) w[k] /= kept;
    }
    return f;
}

// Resamples `axis` of `src` with the filter, computing in T.
template <class T>
Tensor resampleAxis(ThreadPool& pool, const Tensor& src, std::size_t axis, const AxisFilter& f,
                    double extrapolation) {
    Shape shape = src.shape();
    shape[axis] = f.outLength;
    Tensor dst(src.dtype(), shape);
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= shape[d];
    for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    const T* in = src.data<T>();
    T* out = dst.data<T>();
    const T fill = static_cast<T>(extrapolation);
    const std::vector<T> weights(f.weight.begin(), f.weight.end());
    const int width = f.width;
    if (inner == 1) {
        // The last axis: every output element is a short dot product of one input line.
        pool.parallelFor(outer, static_cast<double>(f.outLength * width * 2),
                         [&](std::int64_t begin, std::int64_t end) {
                             for (std::int64_t o = begin; o < end; ++o) {
                                 const T* line = in + o * f.inLength;
                                 T* result = out + o * f.outLength;
                                 for (std::int64_t j = 0; j < f.outLength; ++j) {
                                     if (f.outside[j]) {
                                         result[j] = fill;
                                         continue;
                                     }
                                     const std::int64_t* idx = &f.index[j * width];
                                     const T* w = &weights[j * width];
                                     T sum = w[0] * line[idx[0]];
                                     for (int k = 1; k < width; ++k) sum += w[k] * line[idx[k]];
                                     result[j] = sum;
                                 }
                             }
                         });
        return dst;
    }
    pool.parallelFor(outer * f.outLength, static_cast<double>(inner * width * 2),
                     [&](std::int64_t begin, std::int64_t end) {
                         for (std::int64_t row = begin; row < end; ++row) {
                             const std::int64_t o = row / f.outLength, j = row % f.outLength;
                             T* line = out + row * inner;
                             if (f.outside[j]) {
                                 std::fill_n(line, inner, fill);
                                 continue;
                             }
                             const T* base = in + o * f.inLength * inner;
                             const std::int64_t* idx = &f.index[j * width];
                             const T* w = &weights[j * width];
                             if (width == 1) {
                                 std::copy_n(base + idx[0] * inner, inner, line);
                                 continue;
                             }
                             std::fill_n(line, inner, T(0));
                             for (int k = 0; k < width; ++k) {
                                 if (w[k] == T(0)) continue;
                                 const T weight = w[k];
                                 const T* source = base + idx[k] * inner;
                                 for (std::int64_t i = 0; i < inner; ++i)
                                     line[i] += weight * source[i];
                             }
                         }
                     });
    return dst;
}

// Applies the per-axis filters (identity axes skipped) to `x`.
Tensor resampleSeparable(ThreadPool& pool, const Tensor& x, const std::vector<AxisFilter>& filters,
                         const ResizeSettings& s) {
    std::vector<std::size_t> active;
    for (std::size_t a = 0; a < filters.size(); ++a)
        if (!filters[a].isIdentity()) active.push_back(a);
    // Shrinking axes first keeps the intermediate tensors small.
    std::stable_sort(active.begin(), active.end(), [&](std::size_t a, std::size_t b) {
        return filters[a].outLength * filters[b].inLength <
               filters[b].outLength * filters[a].inLength;
    });
    if (active.empty()) return x.clone();
    const bool gather = s.mode == Interpolation::Nearest;
    auto run = [&]<class T>(Tensor t) {
        for (std::size_t a : active) t = resampleAxis<T>(pool, t, a, filters[a], s.extrapolation);
        return t;
    };
    if (x.dtype() == DataType::Double) return run.template operator()<double>(x);
    if (x.dtype() == DataType::Float) return run.template operator()<float>(x);
    if (gather && isInteger(x.dtype()) && dataTypeSize(x.dtype()) <= 2 && s.extrapolation == 0) {
        // Small integers are exact in float; nearest only moves values.
        return run.template operator()<float>(x.castTo(DataType::Float)).castTo(x.dtype());
    }
    if (gather && x.dtype() != DataType::Float16 && x.dtype() != DataType::BFloat16) {
        // Wide integers and bools: gather exactly in int64 / the original type width.
        if (x.dtype() == DataType::Int64) return run.template operator()<std::int64_t>(x);
        return run.template operator()<double>(x.castTo(DataType::Double)).castTo(x.dtype());
    }
    Tensor y = run.template operator()<float>(x.castTo(DataType::Float));
    if (isInteger(x.dtype())) {
        float* v = y.data<float>();
        for (std::int64_t i = 0; i < y.numel(); ++i) v[i] = std::nearbyint(v[i]);
    }
    return y.castTo(x.dtype());
}

// Resize for every opset form: the kernel reads which inputs hold roi, scales and sizes.
class ResizeKernel : public Kernel {
  public:
    explicit ResizeKernel(const NodeInfo& node) : ResizeKernel(node, node.opsetVersion()) {}
    // `opset`: the ai.onnx Resize version whose inputs and defaults apply (BlockedResize, in its
    // own domain, takes Resize-19's).
    ResizeKernel(const NodeInfo& node, int opset) : opset_(opset) {
        settings_.mode = parseInterpolation(node.getString("mode", "nearest"));
        if (opset_ < 11 || node.opType() == "Upsample") {
            settings_.transform = CoordinateTransform::Asymmetric;
            settings_.rounding = NearestRounding::Floor;
        } else {
            settings_.transform = parseCoordinateTransform(
                node.getString("coordinate_transformation_mode", "half_pixel"));
            settings_.rounding =
                parseNearestRounding(node.getString("nearest_mode", "round_prefer_floor"));
            settings_.cubicA = node.getFloat("cubic_coeff_a", -0.75f);
            settings_.excludeOutside = node.getInt("exclude_outside", 0) != 0;
            settings_.extrapolation = node.getFloat("extrapolation_value", 0.0f);
        }
        if (node.opType() == "Upsample" && opset_ < 9) {
            attributeScales_ = node.getFloats("scales");
            require(!attributeScales_.empty(), "Upsample-7 requires the scales attribute");
        }
        settings_.antialias = node.getInt("antialias", 0) != 0;
        axes_ = node.getInts("axes");
        policy_ = parseAspectRatioPolicy(node.getString("keep_aspect_ratio_policy", "stretch"));
        upsample_ = node.opType() == "Upsample";
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        Plan plan = planFor(x.shape(), inputs);
        if (shapeElementCount(plan.outShape) == 0 || x.numel() == 0) {
            require(shapeElementCount(plan.outShape) == 0,
                    "cannot resize an empty tensor to a non-empty one");
            outputs[0] = Value(Tensor(x.dtype(), plan.outShape));
            return;
        }
        outputs[0] = Value(resampleSeparable(ctx.pool(), x, plan.filters, settings_));
    }

    // The output shape and the filter of every axis for an input of shape `xShape`.
    struct Plan {
        Shape outShape;
        std::vector<AxisFilter> filters;  // empty when either tensor is empty
    };
    Plan planFor(const Shape& xShape, const std::vector<const Value*>& inputs) const {
        const std::size_t rank = xShape.size();
        const Tensor *roi = nullptr, *scales = nullptr, *sizes = nullptr;
        if (upsample_ || opset_ < 11) {
            if (attributeScales_.empty()) scales = &inputTensor(inputs, 1);
        } else {
            roi = optionalInputTensor(inputs, 1);
            scales = optionalInputTensor(inputs, 2);
            sizes = optionalInputTensor(inputs, 3);
        }
        if (scales && scales->numel() == 0) scales = nullptr;
        if (sizes && sizes->numel() == 0) sizes = nullptr;
        require(attributeScales_.size() || scales || sizes, "Resize needs either scales or sizes");
        require(!(scales && sizes), "Resize takes scales or sizes, not both");

        std::vector<std::size_t> axes;
        if (axes_.empty()) {
            for (std::size_t a = 0; a < rank; ++a) axes.push_back(a);
        } else {
            for (auto a : axes_)
                axes.push_back(
                    static_cast<std::size_t>(normalizeAxis(a, static_cast<std::int64_t>(rank))));
        }
        std::vector<double> scale(rank, 1.0);
        Shape outShape = xShape;
        if (sizes) {
            std::vector<std::int64_t> requested = sizes->toInt64Vector();
            require(requested.size() == axes.size(), [&] {
                return "sizes has " + std::to_string(requested.size()) + " values for " +
                       std::to_string(axes.size()) + " axes";
            });
            if (policy_ != AspectRatioPolicy::Stretch) {
                double common = policy_ == AspectRatioPolicy::NotLarger ? 1e300 : 0;
                for (std::size_t i = 0; i < axes.size(); ++i) {
                    const double r = static_cast<double>(requested[i]) / xShape[axes[i]];
                    common = policy_ == AspectRatioPolicy::NotLarger ? std::min(common, r)
                                                                     : std::max(common, r);
                }
                for (std::size_t i = 0; i < axes.size(); ++i)
                    requested[i] = static_cast<std::int64_t>(std::round(common * xShape[axes[i]]));
            }
            for (std::size_t i = 0; i < axes.size(); ++i) {
                require(requested[i] >= 0, "sizes must not be negative");
                outShape[axes[i]] = requested[i];
                scale[axes[i]] =
                    xShape[axes[i]] ? static_cast<double>(requested[i]) / xShape[axes[i]] : 1.0;
            }
        } else {
            std::vector<double> given;
            if (scales)
                for (std::int64_t i = 0; i < scales->numel(); ++i)
                    given.push_back(
                        static_cast<double>(static_cast<float>(scales->valueAsDouble(i))));
            else
                given.assign(attributeScales_.begin(), attributeScales_.end());
            require(given.size() == axes.size(), [&] {
                return "scales has " + std::to_string(given.size()) + " values for " +
                       std::to_string(axes.size()) + " axes";
            });
            for (std::size_t i = 0; i < axes.size(); ++i) {
                require(given[i] > 0, "scales must be positive");
                scale[axes[i]] = given[i];
                outShape[axes[i]] = static_cast<std::int64_t>(
                    std::floor(given[i] * static_cast<double>(xShape[axes[i]])));
            }
        }

        std::vector<double> roiStart(rank, 0.0), roiEnd(rank, 1.0);
        if (settings_.transform == CoordinateTransform::TfCropAndResize && roi &&
            roi->numel() > 0) {
            require(roi->numel() == static_cast<std::int64_t>(2 * axes.size()),
                    "roi must hold a start and an end per resized axis");
            for (std::size_t i = 0; i < axes.size(); ++i) {
                roiStart[axes[i]] = roi->valueAsDouble(static_cast<std::int64_t>(i));
                roiEnd[axes[i]] = roi->valueAsDouble(static_cast<std::int64_t>(i + axes.size()));
            }
        }

        Plan plan{outShape, {}};
        if (shapeElementCount(outShape) == 0 || shapeElementCount(xShape) == 0) return plan;
        for (std::size_t a = 0; a < rank; ++a)
            plan.filters.push_back(makeAxisFilter(settings_, xShape[a], outShape[a], scale[a],
                                                  roiStart[a], roiEnd[a]));
        return plan;
    }

    const ResizeSettings& settings() const { return settings_; }

  private:
    int opset_;
    bool upsample_ = false;
    ResizeSettings settings_;
    std::vector<float> attributeScales_;
    std::vector<std::int64_t> axes_;
    AspectRatioPolicy policy_ = AspectRatioPolicy::Stretch;
};

// The filter that keeps an axis of `length` as it is.
AxisFilter identityFilter(std::int64_t length) {
    AxisFilter f;
    f.inLength = f.outLength = length;
    f.width = 1;
    f.index.resize(static_cast<std::size_t>(length));
    std::iota(f.index.begin(), f.index.end(), std::int64_t{0});
    f.weight.assign(static_cast<std::size_t>(length), 1.0);
    f.outside.assign(static_cast<std::size_t>(length), 0);
    return f;
}

// True when every output position of the filter copies one input position (nearest).
bool isGather(const AxisFilter& f) {
    if (f.width != 1) return false;
    for (std::int64_t j = 0; j < f.outLength; ++j)
        if (f.outside[j] || f.weight[j] != 1.0) return false;
    return true;
}

// com.onnxlens BlockedResize: Resize (Resize-19's inputs and attributes) of a channel-blocked
// X [N, Cb, H, W, b] (ChannelBlockedLayout.h) that keeps N and C: the spatial axes are resampled
// with the filters the plain Resize builds, each output position moving whole channel blocks.
class BlockedResizeKernel : public Kernel {
  public:
    explicit BlockedResizeKernel(const NodeInfo& node) : plain_(node, 19) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.dtype() == DataType::Float && x.rank() == 5, [&] {
            return "BlockedResize: X must be blocked float [N, Cb, H, W, b], got " +
                   shapeToString(x.shape());
        });
        const std::int64_t blocks = x.dim(1), block = x.dim(4);
        const Shape plainShape{x.dim(0), blocks * block, x.dim(2), x.dim(3)};
        ResizeKernel::Plan plan = plain_.planFor(plainShape, inputs);
        require(plan.outShape[0] == plainShape[0] && plan.outShape[1] == plainShape[1] &&
                    (plan.filters.empty() ||
                     (plan.filters[0].isIdentity() && plan.filters[1].isIdentity())),
                [&] {
                    return "BlockedResize resizes the spatial axes only, got the output " +
                           shapeToString(plan.outShape) + " for " + shapeToString(plainShape);
                });
        if (plan.filters.empty()) {
            require(shapeElementCount(plan.outShape) == 0 || x.numel() != 0,
                    "cannot resize an empty tensor to a non-empty one");
            outputs[0] = Value(Tensor(
                DataType::Float, {x.dim(0), blocks, plan.outShape[2], plan.outShape[3], block}));
            return;
        }
        const AxisFilter &fh = plan.filters[2], &fw = plan.filters[3];
        if (isGather(fh) && isGather(fw)) {
            // Nearest (or any one-tap filter): each output position copies one input block of
            // lanes, in one pass over the output.
            const std::int64_t images = x.dim(0) * blocks, w = x.dim(3);
            const std::int64_t oh = fh.outLength, ow = fw.outLength, h = fh.inLength;
            Tensor y(DataType::Float, {x.dim(0), blocks, oh, ow, block});
            const float* in = x.data<float>();
            float* out = y.data<float>();
            ctx.pool().parallelFor(
                images * oh, static_cast<double>(ow * block),
                [&](std::int64_t r0, std::int64_t r1) {
                    for (std::int64_t row = r0; row < r1; ++row) {
                        const std::int64_t image = row / oh, j = row % oh;
                        const float* from = in + (image * h + fh.index[j]) * w * block;
                        float* to = out + row * ow * block;
                        if (block == 8)  // AVX2's block: a fixed-size copy the compiler inlines
                            for (std::int64_t k = 0; k < ow; ++k)
                                std::memcpy(to + k * 8, from + fw.index[k] * 8, 8 * sizeof(float));
                        else
                            for (std::int64_t k = 0; k < ow; ++k)
                                std::copy_n(from + fw.index[k] * block, block, to + k * block);
                    }
                });
            outputs[0] = Value(std::move(y));
            return;
        }
        std::vector<AxisFilter> filters{identityFilter(x.dim(0)), identityFilter(blocks),
                                        std::move(plan.filters[2]), std::move(plan.filters[3]),
                                        identityFilter(block)};
        outputs[0] = Value(resampleSeparable(ctx.pool(), x, filters, plain_.settings()));
    }

  private:
    ResizeKernel plain_;
};

// GridSample (opset 16): 4-D input, grid [N, Hout, Wout, 2] of (x, y) in [-1, 1]; opset 20 adds
// any number r of spatial dims (grid [N, D1out..Drout, r], coordinate k indexing spatial dim
// r-1-k) for nearest and linear; cubic stays 2-D as the definition says.
class GridSampleKernel : public Kernel {
  public:
    explicit GridSampleKernel(const NodeInfo& node)
        : mode_(parseInterpolation(node.getString("mode", "bilinear"))),
          alignCorners_(node.getInt("align_corners", 0) != 0) {
        const std::string padding = node.getString("padding_mode", "zeros");
        if (padding == "zeros")
            padding_ = Padding::Zeros;
        else if (padding == "border")
            padding_ = Padding::Border;
        else if (padding == "reflection")
            padding_ = Padding::Reflection;
        else
            fail("unsupported padding_mode '" + padding + "'");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& grid = inputTensor(inputs, 1);
        if (x.rank() != 4) {
            outputs[0] = Value(runVolume(ctx, x, grid));
            return;
        }
        require(grid.rank() == 4 && grid.dim(0) == x.dim(0) && grid.dim(3) == 2, [&] {
            return "grid must have shape [N, H_out, W_out, 2] with N of the input, got " +
                   shapeToString(grid.shape());
        });
        const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
        const std::int64_t OH = grid.dim(1), OW = grid.dim(2);
        Tensor xd = x.castTo(DataType::Double), gd = grid.castTo(DataType::Double);
        Tensor y(DataType::Double, {N, C, OH, OW});
        const double* in = xd.data<double>();
        const double* g = gd.data<double>();
        double* out = y.data<double>();
        ctx.pool().parallelFor(
            N * OH, static_cast<double>(OW * C * 16), [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t row = b; row < e; ++row) {
                    const std::int64_t n = row / OH, oh = row % OH;
                    for (std::int64_t ow = 0; ow < OW; ++ow) {
                        const double* point = g + ((n * OH + oh) * OW + ow) * 2;
                        const double sx = unnormalize(point[0], W), sy = unnormalize(point[1], H);
                        for (std::int64_t c = 0; c < C; ++c)
                            out[((n * C + c) * OH + oh) * OW + ow] =
                                sample(in + (n * C + c) * H * W, H, W, sx, sy);
                    }
                }
            });
        outputs[0] = Value(y.castTo(x.dtype()));
    }

  private:
    enum class Padding { Zeros, Border, Reflection };

    // r spatial dims other than 2 (opset 20): nearest and linear over 2^r corners.
    Tensor runVolume(KernelContext& ctx, const Tensor& x, const Tensor& grid) const {
        require(x.rank() >= 3, [&] {
            return "GridSample input must be (N, C, D1, ..., Dr), got " + shapeToString(x.shape());
        });
        const auto r = static_cast<std::size_t>(x.rank() - 2);
        require(r <= 6, [&] {
            return "GridSample supports up to 6 spatial dims, got " + std::to_string(r);
        });
        require(mode_ != Interpolation::Cubic, [&] {
            return "GridSample cubic mode needs a 4-D input, got " + shapeToString(x.shape());
        });
        require(grid.rank() == x.rank() && grid.dim(0) == x.dim(0) &&
                    grid.dim(grid.rank() - 1) == static_cast<std::int64_t>(r),
                [&] {
                    return "grid must have shape [N, D1_out, ..., Dr_out, " + std::to_string(r) +
                           "] with N of the input, got " + shapeToString(grid.shape());
                });
        const std::int64_t N = x.dim(0), C = x.dim(1);
        const Shape size(x.shape().begin() + 2, x.shape().end());
        Shape outShape{N, C};
        for (std::size_t d = 0; d < r; ++d)
            outShape.push_back(grid.dim(static_cast<std::int64_t>(d) + 1));
        const std::int64_t inPlane = shapeElementCount(size);
        const std::int64_t outPlane = shapeElementCount(std::span(outShape).subspan(2));
        const std::vector<std::int64_t> stride = shapeStrides(size);
        Tensor xd = x.castTo(DataType::Double), gd = grid.castTo(DataType::Double);
        Tensor y(DataType::Double, outShape);
        const double* in = xd.data<double>();
        const double* g = gd.data<double>();
        double* out = y.data<double>();
        const std::size_t corners = std::size_t{1} << r;
        ctx.pool().parallelFor(
            N * outPlane, static_cast<double>(C * corners * 4),
            [&](std::int64_t b, std::int64_t e) {
                std::vector<double> coord(r), weight(r);
                std::vector<std::int64_t> base(r);
                for (std::int64_t point = b; point < e; ++point) {
                    const std::int64_t n = point / outPlane, o = point % outPlane;
                    const double* p = g + point * static_cast<std::int64_t>(r);
                    for (std::size_t d = 0; d < r; ++d) {
                        const std::size_t k = r - 1 - d;  // grid coordinate k indexes dim r-1-k
                        coord[d] = pad(unnormalize(p[k], size[d]), size[d]);
                    }
                    for (std::int64_t c = 0; c < C; ++c) {
                        const double* plane = in + (n * C + c) * inPlane;
                        double sum = 0;
                        if (mode_ == Interpolation::Nearest) {
                            std::int64_t offset = 0;
                            bool inside = true;
                            for (std::size_t d = 0; d < r && inside; ++d) {
                                const double v = std::nearbyint(coord[d]);
                                inside = v >= 0 && v < static_cast<double>(size[d]);
                                if (inside) offset += static_cast<std::int64_t>(v) * stride[d];
                            }
                            sum = inside ? plane[offset] : 0;
                        } else {
                            for (std::size_t d = 0; d < r; ++d) {
                                const double f = std::floor(coord[d]);
                                weight[d] = coord[d] - f;
                                base[d] = std::isfinite(f)
                                              ? static_cast<std::int64_t>(std::clamp(f, -2.0, 1e15))
                                              : -2;
                            }
                            for (std::size_t corner = 0; corner < corners; ++corner) {
                                double w = 1;
                                std::int64_t offset = 0;
                                bool inside = true;
                                for (std::size_t d = 0; d < r && inside; ++d) {
                                    const bool up = (corner >> d) & 1;
                                    const std::int64_t at = base[d] + (up ? 1 : 0);
                                    inside = at >= 0 && at < size[d];
                                    w *= up ? weight[d] : 1 - weight[d];
                                    offset += at * stride[d];
                                }
                                if (inside) sum += w * plane[offset];
                            }
                        }
                        out[(n * C + c) * outPlane + o] = sum;
                    }
                }
            });
        return y.castTo(x.dtype());
    }

    double unnormalize(double coord, std::int64_t size) const {
        return alignCorners_ ? (coord + 1) / 2 * static_cast<double>(size - 1)
                             : ((coord + 1) * static_cast<double>(size) - 1) / 2;
    }

    // Reflects a coordinate into [low, high] given as twice their values (PyTorch's convention).
    static double reflect(double v, double twiceLow, double twiceHigh) {
        if (twiceLow == twiceHigh) return 0;
        const double low = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
        v = std::fabs(v - low);
        const double extra = std::fmod(v, span);
        const bool evenFlips = std::fmod(std::floor(v / span), 2.0) == 0;
        return evenFlips ? extra + low : span - extra + low;
    }

    // Border and reflection padding move a coordinate inside [0, size - 1].
    double pad(double v, std::int64_t size) const {
        const double hi = static_cast<double>(size - 1);
        if (padding_ == Padding::Border) return std::clamp(v, 0.0, hi);
        if (padding_ == Padding::Reflection) {
            v = alignCorners_ ? reflect(v, 0, 2 * hi) : reflect(v, -1, 2 * hi + 1);
            return std::clamp(v, 0.0, hi);
        }
        return v;
    }

    // Adds weight * pixel(x, y) for integral coordinates inside the image; taps outside (zeros
    // padding) or not finite add nothing, whatever their weight.
    static void addPixel(double& sum, double weight, const double* plane, std::int64_t H,
                         std::int64_t W, double x, double y) {
        if (!(x >= 0 && x < static_cast<double>(W) && y >= 0 && y < static_cast<double>(H))) return;
        sum += weight * plane[static_cast<std::int64_t>(y) * W + static_cast<std::int64_t>(x)];
    }

    double sample(const double* plane, std::int64_t H, std::int64_t W, double sx, double sy) const {
        if (mode_ == Interpolation::Cubic) {
            // Bicubic pads every tap, not the sampling point.
            const double bx = std::floor(sx), by = std::floor(sy);
            double wx[4], wy[4];
            cubicWeights(sx - bx, -0.75, wx);
            cubicWeights(sy - by, -0.75, wy);
            double sum = 0;
            for (int j = 0; j < 4; ++j)
                for (int i = 0; i < 4; ++i) {
                    double px = bx - 1 + i, py = by - 1 + j;
                    if (padding_ != Padding::Zeros) {
                        px = pad(px, W);
                        py = pad(py, H);
                    }
                    addPixel(sum, wx[i] * wy[j], plane, H, W, px, py);
                }
            return sum;
        }
        sx = pad(sx, W);
        sy = pad(sy, H);
        if (mode_ == Interpolation::Nearest) {
            double value = 0;
            addPixel(value, 1.0, plane, H, W, std::nearbyint(sx), std::nearbyint(sy));
            return value;
        }
        const double x0 = std::floor(sx), y0 = std::floor(sy);
        const double tx = sx - x0, ty = sy - y0;
        double sum = 0;
        addPixel(sum, (1 - tx) * (1 - ty), plane, H, W, x0, y0);
        addPixel(sum, tx * (1 - ty), plane, H, W, x0 + 1, y0);
        addPixel(sum, (1 - tx) * ty, plane, H, W, x0, y0 + 1);
        addPixel(sum, tx * ty, plane, H, W, x0 + 1, y0 + 1);
        return sum;
    }

    Interpolation mode_;
    bool alignCorners_;
    Padding padding_ = Padding::Zeros;
};

// AffineGrid (opset 20): the sampling grid GridSample reads, from a batch of affine matrices.
// theta [N, 2, 3] and size (N, C, H, W) give [N, H, W, 2]; theta [N, 3, 4] and size
// (N, C, D, H, W) give [N, D, H, W, 3]. Base coordinates span [-1, 1] (pixel centers unless
// align_corners), x varying along the last spatial dim.
class AffineGridKernel : public Kernel {
  public:
    explicit AffineGridKernel(const NodeInfo& node)
        : alignCorners_(node.getInt("align_corners", 0) != 0) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& theta = inputTensor(inputs, 0);
        const std::vector<std::int64_t> size = inputTensor(inputs, 1).toInt64Vector();
        require(isFloatingPoint(theta.dtype()), [&] {
            return std::string("AffineGrid: theta must be floating point, got ") +
                   dataTypeName(theta.dtype());
        });
        require(size.size() == 4 || size.size() == 5,
                "AffineGrid: size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values");
        const std::int64_t dims = static_cast<std::int64_t>(size.size()) - 2;  // 2 or 3
        const std::int64_t n = size[0];
        for (auto v : size) require(v > 0, "AffineGrid: size values must be positive");
        require(theta.rank() == 3 && theta.dim(0) == n && theta.dim(1) == dims &&
                    theta.dim(2) == dims + 1,
                [&] {
                    return "AffineGrid: theta must be [N, " + std::to_string(dims) + ", " +
                           std::to_string(dims + 1) + "] for a size of " +
                           std::to_string(size.size()) + " values, got " +
                           shapeToString(theta.shape());
                });
        // Spatial sizes, outermost first (D, H, W or H, W).
        const std::vector<std::int64_t> spatial(size.begin() + 2, size.end());
        Shape outShape = {n};
        for (auto d : spatial) outShape.push_back(d);
        outShape.push_back(dims);
        Tensor grid(DataType::Double, outShape);
        double* out = grid.data<double>();
        const Tensor thetaDouble = theta.castTo(DataType::Double);
        const double* m = thetaDouble.data<double>();
        std::int64_t points = 1;
        for (auto d : spatial) points *= d;
        std::vector<double> base(static_cast<std::size_t>(dims));
        for (std::int64_t b = 0; b < n; ++b) {
            const double* matrix = m + b * dims * (dims + 1);
            for (std::int64_t p = 0; p < points; ++p) {
                // base = (x, y[, z]): x from the last spatial index.
                for (std::int64_t rest = p, k = 0; k < dims; ++k) {
                    const std::int64_t length = spatial[static_cast<std::size_t>(dims - 1 - k)];
                    base[static_cast<std::size_t>(k)] = coordinate(rest % length, length);
                    rest /= length;
                }
                double* point = out + (b * points + p) * dims;
                for (std::int64_t r = 0; r < dims; ++r) {
                    const double* row = matrix + r * (dims + 1);
                    double v = row[dims];
                    for (std::int64_t k = 0; k < dims; ++k)
                        v += row[k] * base[static_cast<std::size_t>(k)];
                    point[r] = v;
                }
            }
        }
        outputs[0] = Value(grid.castTo(theta.dtype()));
    }

  private:
    double coordinate(std::int64_t index, std::int64_t length) const {
        const double i = static_cast<double>(index), l = static_cast<double>(length);
        if (alignCorners_) return length == 1 ? 0.0 : -1.0 + 2.0 * i / (l - 1);
        return (2.0 * i + 1.0) / l - 1.0;
    }

    bool alignCorners_;
};

}  // namespace

void registerResizeOps(KernelRegistry& registry) {
    registry.add<ResizeKernel>("Resize", 10);
    registry.add<ResizeKernel>("Upsample", 7, 10);
    registry.add<BlockedResizeKernel>("BlockedResize", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<GridSampleKernel>("GridSample", 16);
    registry.add<AffineGridKernel>("AffineGrid", 20);
}

}  // namespace onnxlens::engine::ops
