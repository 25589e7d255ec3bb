// Detection heads: NonMaxSuppression and RoiAlign.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "OpFamilies.h"

namespace onnxlens::engine::ops {

namespace {

// A box as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2.
struct Box {
    double y1, x1, y2, x2;
    double area() const { return (y2 - y1) * (x2 - x1); }
};

double intersectionOverUnion(const Box& a, const Box& b) {
    const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    const double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    if (h <= 0 || w <= 0) return 0;
    const double intersection = h * w;
    const double unionArea = a.area() + b.area() - intersection;
    return unionArea > 0 ? intersection / unionArea : 0;
}

class NonMaxSuppressionKernel : public Kernel {
  public:
    explicit NonMaxSuppressionKernel(const NodeInfo& node)
        : centerPointBox_(node.getInt("center_point_box", 0)) {
        require(centerPointBox_ == 0 || centerPointBox_ == 1, "center_point_box must be 0 or 1");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& boxes = inputTensor(inputs, 0);
        const Tensor& scores = inputTensor(inputs, 1);
        const Tensor* maxOutput = optionalInputTensor(inputs, 2);
        const Tensor* iouThreshold = optionalInputTensor(inputs, 3);
        const Tensor* scoreThreshold = optionalInputTensor(inputs, 4);
        require(boxes.rank() == 3 && boxes.dim(2) == 4, [&] {
            return "boxes must have shape [batches, boxes, 4], got " + shapeToString(boxes.shape());
        });
        require(
            scores.rank() == 3 && scores.dim(0) == boxes.dim(0) && scores.dim(2) == boxes.dim(1),
            [&] {
                return "scores " + shapeToString(scores.shape()) +
                       " must have shape [batches, classes, boxes] matching boxes " +
                       shapeToString(boxes.shape());
            });
        const std::int64_t perClass =
            maxOutput && maxOutput->numel() > 0 ? maxOutput->valueAsInt64(0) : 0;
        const double iouLimit =
            iouThreshold && iouThreshold->numel() > 0 ? iouThreshold->valueAsDouble(0) : 0.0;
        const bool hasScoreLimit = scoreThreshold && scoreThreshold->numel() > 0;
        const double scoreLimit = hasScoreLimit ? scoreThreshold->valueAsDouble(0) : 0.0;
        require(iouLimit >= 0 && iouLimit <= 1, "iou_threshold must be in [0, 1]");

        const std::int64_t batches = boxes.dim(0), count = boxes.dim(1), classes = scores.dim(1);
        std::vector<std::int64_t> selected;  // triples (batch, class, box)
        std::vector<Box> decoded(static_cast<std::size_t>(count));
        std::vector<std::int64_t> order;
        std::vector<std::int64_t> kept;
        for (std::int64_t b = 0; b < batches && perClass > 0; ++b) {
            for (std::int64_t i = 0; i < count; ++i)
                decoded[i] = decode(boxes, (b * count + i) * 4);
            for (std::int64_t c = 0; c < classes; ++c) {
                const std::int64_t base = (b * classes + c) * count;
                order.clear();
                for (std::int64_t i = 0; i < count; ++i) {
                    const double score = scores.valueAsDouble(base + i);
                    // NaN scores never qualify (and would break the sort's ordering).
                    if (!std::isnan(score) && (!hasScoreLimit || score > scoreLimit))
                        order.push_back(i);
                }
                // Highest score first; equal scores keep the lower box index first.
                std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
                    return scores.valueAsDouble(base + l) > scores.valueAsDouble(base + r);
                });
                kept.clear();
                for (std::int64_t candidate : order) {
                    if (static_cast<std::int64_t>(kept.size()) >= perClass) break;
                    bool suppressed = false;
                    for (std::int64_t k : kept)
                        if (intersectionOverUnion(decoded[candidate], decoded[k]) > iouLimit) {
                            suppressed = true;
                            break;
                        }
                    if (suppressed) continue;
                    kept.push_back(candidate);
                    selected.insert(selected.end(), {b, c, candidate});
                }
            }
        }
        outputs[0] = Value(Tensor::fromVector<std::int64_t>(
            {static_cast<std::int64_t>(selected.size() / 3), 3}, selected));
    }

  private:
    Box decode(const Tensor& boxes, std::int64_t offset) const {
        double v[4];
        for (int i = 0; i < 4; ++i) v[i] = boxes.valueAsDouble(offset + i);
        if (centerPointBox_ == 1) {  // x_center, y_center, width, height
            return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
        }
        return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]),
                std::max(v[1], v[3])};
    }

    std::int64_t centerPointBox_;
};

class RoiAlignKernel : public Kernel {
  public:
    explicit RoiAlignKernel(const NodeInfo& node)
        : outputHeight_(node.getInt("output_height", 1)),
          outputWidth_(node.getInt("output_width", 1)),
          samplingRatio_(node.getInt("sampling_ratio", 0)),
          spatialScale_(node.getFloat("spatial_scale", 1.0f)) {
        const std::string mode = node.getString("mode", "avg");
        require(mode == "avg" || mode == "max", "RoiAlign mode must be 'avg' or 'max'");
        maxMode_ = mode == "max";
        // Opset 10 had no attribute and behaved as output_half_pixel.
        const std::string transform =
            node.getString("coordinate_transformation_mode",
                           node.opsetVersion() >= 16 ? "half_pixel" : "output_half_pixel");
        require(transform == "half_pixel" || transform == "output_half_pixel",
                [&] { return "unsupported coordinate_transformation_mode '" + transform + "'"; });
        halfPixel_ = transform == "half_pixel";
        require(outputHeight_ > 0 && outputWidth_ > 0,
                "output_height and output_width must be positive");
        require(samplingRatio_ >= 0, "sampling_ratio must not be negative");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& rois = inputTensor(inputs, 1);
        const Tensor& batchIndices = inputTensor(inputs, 2);
        require(x.rank() == 4, [&] {
            return "RoiAlign input must be 4-D (N, C, H, W), got " + shapeToString(x.shape());
        });
        require(rois.rank() == 2 && rois.dim(1) == 4, [&] {
            return "rois must have shape [num_rois, 4], got " + shapeToString(rois.shape());
        });
        require(batchIndices.rank() == 1 && batchIndices.dim(0) == rois.dim(0),
                "batch_indices must have shape [num_rois]");
        const std::int64_t R = rois.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
        Tensor xd = x.castTo(DataType::Double);
        const double* in = xd.data<double>();
        Tensor y(DataType::Double, {R, C, outputHeight_, outputWidth_});
        double* out = y.data<double>();
        const double offset = halfPixel_ ? 0.5 : 0.0;
        for (std::int64_t r = 0; r < R; ++r) {
            const std::int64_t batch = batchIndices.valueAsInt64(r);
            require(batch >= 0 && batch < x.dim(0),
                    [&] { return "batch index " + std::to_string(batch) + " is out of range"; });
            for (int i = 0; i < 4; ++i)
                require(std::isfinite(rois.valueAsDouble(r * 4 + i)),
                        "roi coordinates must be finite");
            const double x1 = rois.valueAsDouble(r * 4) * spatialScale_ - offset;
            const double y1 = rois.valueAsDouble(r * 4 + 1) * spatialScale_ - offset;
            double roiW = rois.valueAsDouble(r * 4 + 2) * spatialScale_ - offset - x1;
            double roiH = rois.valueAsDouble(r * 4 + 3) * spatialScale_ - offset - y1;
            if (!halfPixel_) {  // legacy: force malformed rois to 1x1
                roiW = std::max(roiW, 1.0);
                roiH = std::max(roiH, 1.0);
            }
            const double binH = roiH / outputHeight_, binW = roiW / outputWidth_;
            // Sampling points per bin along each axis (computed in double: rois may be huge).
            auto gridSize = [&](double extent, std::int64_t bins) {
                return samplingRatio_ > 0 ? static_cast<double>(samplingRatio_)
                                          : std::max(0.0, std::ceil(extent / bins));
            };
            const double gridHd = gridSize(roiH, outputHeight_),
                         gridWd = gridSize(roiW, outputWidth_);
            require(
                static_cast<double>(outputHeight_ * outputWidth_) * gridHd * gridWd <= 1e8, [&] {
                    return "roi " + std::to_string(r) + " would need more than 1e8 sampling points";
                });
            const auto gridH = static_cast<std::int64_t>(gridHd);
            const auto gridW = static_cast<std::int64_t>(gridWd);
            const double samples = static_cast<double>(std::max<std::int64_t>(gridH * gridW, 1));
            // Sample positions and weights are the same for every channel.
            std::vector<Tap> taps;
            for (std::int64_t ph = 0; ph < outputHeight_; ++ph)
                for (std::int64_t pw = 0; pw < outputWidth_; ++pw)
                    for (std::int64_t iy = 0; iy < gridH; ++iy)
                        for (std::int64_t ix = 0; ix < gridW; ++ix)
                            taps.push_back(bilinearTap(y1 + ph * binH + (iy + 0.5) * binH / gridH,
                                                       x1 + pw * binW + (ix + 0.5) * binW / gridW,
                                                       H, W));
            const std::int64_t perBin = gridH * gridW;
            ctx.pool().parallelFor(
                C, static_cast<double>(taps.size() * 8), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t c = b; c < e; ++c) {
                        const double* plane = in + (batch * C + c) * H * W;
                        double* o = out + (r * C + c) * outputHeight_ * outputWidth_;
                        for (std::int64_t bin = 0; bin < outputHeight_ * outputWidth_; ++bin) {
                            double acc = 0;
                            bool first = true;
                            for (std::int64_t s = 0; s < perBin; ++s) {
                                const Tap& t = taps[bin * perBin + s];
                                if (!maxMode_) {
                                    for (int k = 0; k < 4; ++k)
                                        acc += t.weight[k] * plane[t.offset[k]];
                                    continue;
                                }
                                // ONNX Runtime's max: the largest weighted corner over all samples.
                                double m = t.weight[0] * plane[t.offset[0]];
                                for (int k = 1; k < 4; ++k)
                                    m = std::max(m, t.weight[k] * plane[t.offset[k]]);
                                acc = first ? m : std::max(acc, m);
                                first = false;
                            }
                            o[bin] = maxMode_ ? acc : acc / samples;
                        }
                    }
                });
        }
        outputs[0] = Value(y.castTo(x.dtype()));
    }

  private:
    struct Tap {
        std::int64_t offset[4] = {0, 0, 0, 0};
        double weight[4] = {0, 0, 0, 0};
    };

    // The four corners and weights of bilinear sampling at (y, x); zero weights outside.
    static Tap bilinearTap(double y, double x, std::int64_t H, std::int64_t W) {
        Tap t;
        if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W) ||
            H == 0 || W == 0)
            return t;
        y = std::max(y, 0.0);
        x = std::max(x, 0.0);
        auto yLow = static_cast<std::int64_t>(y), xLow = static_cast<std::int64_t>(x);
        std::int64_t yHigh = yLow + 1, xHigh = xLow + 1;
        if (yLow >= H - 1) {
            yLow = yHigh = H - 1;
            y = static_cast<double>(yLow);
        }
        if (xLow >= W - 1) {
            xLow = xHigh = W - 1;
            x = static_cast<double>(xLow);
        }
        const double ly = y - yLow, lx = x - xLow, hy = 1 - ly, hx = 1 - lx;
        t.offset[0] = yLow * W + xLow;
        t.offset[1] = yLow * W + xHigh;
        t.offset[2] = yHigh * W + xLow;
        t.offset[3] = yHigh * W + xHigh;
        t.weight[0] = hy * hx;
        t.weight[1] = hy * lx;
        t.weight[2] = ly * hx;
        t.weight[3] = ly * lx;
        return t;
    }

    std::int64_t outputHeight_, outputWidth_, samplingRatio_;
    float spatialScale_;
    bool maxMode_ = false, halfPixel_ = true;
};

}  // namespace

void registerObjectDetectionOps(KernelRegistry& registry) {
    registry.add<NonMaxSuppressionKernel>("NonMaxSuppression", 10);
    registry.add<RoiAlignKernel>("RoiAlign", 10);
}

}  // namespace onnxlens::engine::ops
