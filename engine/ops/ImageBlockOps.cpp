// Operators that move image blocks around: Col2Im (opset 18: sums sliding blocks back into an
// image, the inverse of im2col) and DeformConv (opset 19: a convolution whose taps sample the
// input at learned offsets, bilinearly, optionally masked). Both compute in double; they are
// rare in models and exactness matters more here than speed.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "OpFamilies.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/engine/Shape.h"

namespace onnxlens::engine::ops {

namespace {

std::vector<std::int64_t> attributeOr(const NodeInfo& node, const char* name, std::size_t count,
                                      std::int64_t fallback) {
    std::vector<std::int64_t> values = node.getInts(name);
    if (values.empty()) values.assign(count, fallback);
    return values;
}

void requireFloat(const Tensor& t, const char* op, const char* what) {
    require(isFloatingPoint(t.dtype()), [&] {
        return std::string(op) + ": " + what + " must be floating point, got " +
               dataTypeName(t.dtype());
    });
}

std::vector<double> doublesOf(const Tensor& t) {
    const Tensor d = t.castTo(DataType::Double);
    const double* p = d.data<double>();
    return std::vector<double>(p, p + d.numel());
}

class Col2ImKernel final : public Kernel {
  public:
    explicit Col2ImKernel(const NodeInfo& node)
        : dilations_(node.getInts("dilations")),
          pads_(node.getInts("pads")),
          strides_(node.getInts("strides")) {
        for (auto d : dilations_) require(d > 0, "Col2Im: dilations must be positive");
        for (auto s : strides_) require(s > 0, "Col2Im: strides must be positive");
        for (auto p : pads_) require(p >= 0, "Col2Im: pads must not be negative");
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        requireFloat(x, "Col2Im", "input");
        const std::vector<std::int64_t> image = inputTensor(inputs, 1).toInt64Vector();
        const std::vector<std::int64_t> block = inputTensor(inputs, 2).toInt64Vector();
        const std::size_t k = image.size();
        require(k >= 1 && block.size() == k,
                "Col2Im: image_shape and block_shape need the same (non-zero) length");
        require(x.rank() == 3, [&] {
            return "Col2Im: input must be [N, C * prod(block_shape), L], got " +
                   shapeToString(x.shape());
        });
        const auto dilations = dilations_.empty() ? std::vector<std::int64_t>(k, 1) : dilations_;
        const auto strides = strides_.empty() ? std::vector<std::int64_t>(k, 1) : strides_;
        const auto pads = pads_.empty() ? std::vector<std::int64_t>(2 * k, 0) : pads_;
        require(dilations.size() == k && strides.size() == k && pads.size() == 2 * k, [&] {
            return "Col2Im: dilations, strides and pads must match the " + std::to_string(k) +
                   " image dims";
        });
        std::int64_t blockSize = 1, blocks = 1;
        std::vector<std::int64_t> positions(k);
        for (std::size_t i = 0; i < k; ++i) {
            require(image[i] > 0 && block[i] > 0,
                    "Col2Im: image_shape and block_shape must be positive");
            blockSize = checkedProduct(blockSize, block[i]);
            const std::int64_t span =
                image[i] + pads[i] + pads[i + k] - (dilations[i] * (block[i] - 1) + 1);
            require(span >= 0, [&] {
                return "Col2Im: the block does not fit into the padded image on axis " +
                       std::to_string(i);
            });
            positions[i] = span / strides[i] + 1;
            blocks = checkedProduct(blocks, positions[i]);
        }
        require(x.dim(1) % blockSize == 0, [&] {
            return "Col2Im: input dim 1 (" + std::to_string(x.dim(1)) +
                   ") is not a multiple of the block size " + std::to_string(blockSize);
        });
        require(x.dim(2) == blocks, [&] {
            return "Col2Im: input has " + std::to_string(x.dim(2)) +
                   " blocks, the image and block shapes give " + std::to_string(blocks);
        });
        const std::int64_t n = x.dim(0), c = x.dim(1) / blockSize;
        Shape outShape = {n, c};
        for (auto d : image) outShape.push_back(d);
        Tensor sum = Tensor::zeros(DataType::Double, outShape);
        double* out = sum.data<double>();
        const std::vector<double> in = doublesOf(x);
        const std::int64_t imageSize = shapeElementCount(std::span(outShape).subspan(2));
        std::vector<std::int64_t> offset(k), position(k);
        for (std::int64_t b = 0; b < n * c; ++b) {
            double* plane = out + b * imageSize;
            for (std::int64_t kk = 0; kk < blockSize; ++kk) {
                for (std::int64_t rest = kk, i = static_cast<std::int64_t>(k) - 1; i >= 0; --i) {
                    offset[i] = rest % block[i];
                    rest /= block[i];
                }
                const double* column = in.data() + (b * blockSize + kk) * blocks;
                for (std::int64_t l = 0; l < blocks; ++l) {
                    std::int64_t at = 0;
                    bool inside = true;
                    for (std::int64_t rest = l, i = static_cast<std::int64_t>(k) - 1; i >= 0; --i) {
                        position[i] = rest % positions[i];
                        rest /= positions[i];
                    }
                    for (std::size_t i = 0; i < k; ++i) {
                        const std::int64_t coordinate =
                            position[i] * strides[i] - pads[i] + offset[i] * dilations[i];
                        if (coordinate < 0 || coordinate >= image[i]) {
                            inside = false;
                            break;
                        }
                        at = at * image[i] + coordinate;
                    }
                    if (inside) plane[at] += column[l];
                }
            }
        }
        outputs[0] = Value(sum.castTo(x.dtype()));
    }

  private:
    static std::int64_t checkedProduct(std::int64_t a, std::int64_t b) {
        require(b == 0 || a <= (std::int64_t{1} << 40) / b, "Col2Im: sizes overflow");
        return a * b;
    }
    std::vector<std::int64_t> dilations_, pads_, strides_;
};

// DeformConv on 2-D images: X [N, C, H, W], W [oC, C/group, kH, kW], offset
// [N, offset_group * 2 * kH * kW, oH, oW] holding (dh, dw) per tap, optional B [oC] and mask
// [N, offset_group * kH * kW, oH, oW].
class DeformConvKernel final : public Kernel {
  public:
    explicit DeformConvKernel(const NodeInfo& node)
        : group_(node.getInt("group", 1)),
          offsetGroup_(node.getInt("offset_group", 1)),
          kernelShape_(node.getInts("kernel_shape")),
          dilations_(attributeOr(node, "dilations", 2, 1)),
          pads_(attributeOr(node, "pads", 4, 0)),
          strides_(attributeOr(node, "strides", 2, 1)) {
        require(group_ > 0 && offsetGroup_ > 0,
                "DeformConv: group and offset_group must be positive");
        require(dilations_.size() == 2 && strides_.size() == 2 && pads_.size() == 4,
                "DeformConv: only 2-D images are supported (dilations, strides of 2 values, "
                "pads of 4)");
        for (auto d : dilations_) require(d > 0, "DeformConv: dilations must be positive");
        for (auto s : strides_) require(s > 0, "DeformConv: strides must be positive");
        for (auto p : pads_) require(p >= 0, "DeformConv: pads must not be negative");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor& offset = inputTensor(inputs, 2);
        const Tensor* bias = optionalInputTensor(inputs, 3);
        const Tensor* mask = optionalInputTensor(inputs, 4);
        requireFloat(x, "DeformConv", "X");
        require(x.rank() == 4 && w.rank() == 4, [&] {
            return "DeformConv: X and W must be 4-D (2-D images), got " + shapeToString(x.shape()) +
                   " and " + shapeToString(w.shape());
        });
        const std::int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
        const std::int64_t oc = w.dim(0), kh = w.dim(2), kw = w.dim(3);
        if (!kernelShape_.empty())
            require(kernelShape_.size() == 2 && kernelShape_[0] == kh && kernelShape_[1] == kw,
                    "DeformConv: kernel_shape disagrees with W");
        require(c % group_ == 0 && oc % group_ == 0 && w.dim(1) == c / group_, [&] {
            return "DeformConv: W " + shapeToString(w.shape()) + " does not fit " +
                   std::to_string(c) + " channels in " + std::to_string(group_) + " groups";
        });
        require(c % offsetGroup_ == 0, "DeformConv: channels do not split into offset_group");
        const std::int64_t oh =
            (h + pads_[0] + pads_[2] - (dilations_[0] * (kh - 1) + 1)) / strides_[0] + 1;
        const std::int64_t ow =
            (wd + pads_[1] + pads_[3] - (dilations_[1] * (kw - 1) + 1)) / strides_[1] + 1;
        require(oh > 0 && ow > 0, "DeformConv: the kernel does not fit the padded input");
        const std::int64_t taps = kh * kw;
        require(offset.rank() == 4 && offset.dim(0) == n &&
                    offset.dim(1) == offsetGroup_ * 2 * taps && offset.dim(2) == oh &&
                    offset.dim(3) == ow,
                [&] {
                    return "DeformConv: offset must be [N, offset_group*2*kH*kW, oH, oW] = [" +
                           std::to_string(n) + ", " + std::to_string(offsetGroup_ * 2 * taps) +
                           ", " + std::to_string(oh) + ", " + std::to_string(ow) + "], got " +
                           shapeToString(offset.shape());
                });
        if (mask)
            require(mask->rank() == 4 && mask->dim(0) == n && mask->dim(1) == offsetGroup_ * taps &&
                        mask->dim(2) == oh && mask->dim(3) == ow,
                    [&] {
                        return "DeformConv: mask must be [N, offset_group*kH*kW, oH, oW], got " +
                               shapeToString(mask->shape());
                    });
        if (bias) require(bias->numel() == oc, "DeformConv: B needs one value per output channel");

        const std::vector<double> xs = doublesOf(x), ws = doublesOf(w), offsets = doublesOf(offset);
        const std::vector<double> masks = mask ? doublesOf(*mask) : std::vector<double>();
        const std::vector<double> biases = bias ? doublesOf(*bias) : std::vector<double>();
        const std::int64_t cPerGroup = c / group_, ocPerGroup = oc / group_;
        const std::int64_t cPerOffsetGroup = c / offsetGroup_;
        Tensor y(DataType::Double, {n, oc, oh, ow});
        double* out = y.data<double>();
        // columns[(ic * taps + t) * oh * ow + p]: the sampled (and masked) input of every tap.
        ctx.pool().parallelFor(
            n,
            static_cast<double>(c * taps * oh * ow * 12) +
                static_cast<double>(oc * c * taps * oh * ow) / static_cast<double>(group_),
            [&](std::int64_t begin, std::int64_t end) {
                std::vector<double> columns(static_cast<std::size_t>(c * taps * oh * ow));
                for (std::int64_t b = begin; b < end; ++b) {
                    for (std::int64_t ic = 0; ic < c; ++ic) {
                        const std::int64_t og = ic / cPerOffsetGroup;
                        const double* plane = xs.data() + (b * c + ic) * h * wd;
                        for (std::int64_t t = 0; t < taps; ++t) {
                            const std::int64_t ti = t / kw, tj = t % kw;
                            const double* dh =
                                offsets.data() +
                                ((b * offsetGroup_ + og) * 2 * taps + 2 * t) * oh * ow;
                            const double* dw = dh + oh * ow;
                            const double* m =
                                mask ? masks.data() + ((b * offsetGroup_ + og) * taps + t) * oh * ow
                                     : nullptr;
                            double* col = columns.data() + (ic * taps + t) * oh * ow;
                            for (std::int64_t p = 0; p < oh * ow; ++p) {
                                const std::int64_t i = p / ow, j = p % ow;
                                const double sy = static_cast<double>(i * strides_[0] - pads_[0] +
                                                                      ti * dilations_[0]) +
                                                  dh[p];
                                const double sx = static_cast<double>(j * strides_[1] - pads_[1] +
                                                                      tj * dilations_[1]) +
                                                  dw[p];
                                double v = bilinear(plane, h, wd, sy, sx);
                                if (m) v *= m[p];
                                col[p] = v;
                            }
                        }
                    }
                    for (std::int64_t o = 0; o < oc; ++o) {
                        const std::int64_t g = o / ocPerGroup;
                        double* result = out + (b * oc + o) * oh * ow;
                        const double initial =
                            biases.empty() ? 0.0 : biases[static_cast<std::size_t>(o)];
                        for (std::int64_t p = 0; p < oh * ow; ++p) result[p] = initial;
                        for (std::int64_t icg = 0; icg < cPerGroup; ++icg) {
                            const std::int64_t ic = g * cPerGroup + icg;
                            for (std::int64_t t = 0; t < taps; ++t) {
                                const double weight =
                                    ws[static_cast<std::size_t>((o * cPerGroup + icg) * taps + t)];
                                const double* col = columns.data() + (ic * taps + t) * oh * ow;
                                for (std::int64_t p = 0; p < oh * ow; ++p)
                                    result[p] += weight * col[p];
                            }
                        }
                    }
                }
            });
        outputs[0] = Value(y.castTo(x.dtype()));
    }

  private:
    // Bilinear sample with zeros outside the image (each of the four taps on its own).
    static double bilinear(const double* plane, std::int64_t h, std::int64_t w, double y,
                           double x) {
        if (!(y > -1.0 && y < static_cast<double>(h) && x > -1.0 && x < static_cast<double>(w)))
            return 0.0;
        const double y0 = std::floor(y), x0 = std::floor(x);
        const double ty = y - y0, tx = x - x0;
        const auto at = [&](double yy, double xx) {
            if (yy < 0 || xx < 0 || yy >= static_cast<double>(h) || xx >= static_cast<double>(w))
                return 0.0;
            return plane[static_cast<std::int64_t>(yy) * w + static_cast<std::int64_t>(xx)];
        };
        return (1 - ty) * (1 - tx) * at(y0, x0) + (1 - ty) * tx * at(y0, x0 + 1) +
               ty * (1 - tx) * at(y0 + 1, x0) + ty * tx * at(y0 + 1, x0 + 1);
    }

    std::int64_t group_, offsetGroup_;
    std::vector<std::int64_t> kernelShape_, dilations_, pads_, strides_;
};

}  // namespace

void registerImageBlockOps(KernelRegistry& registry) {
    registry.add<Col2ImKernel>("Col2Im", 18);
    registry.add<DeformConvKernel>("DeformConv", 19);
}

}  // namespace onnxlens::engine::ops
