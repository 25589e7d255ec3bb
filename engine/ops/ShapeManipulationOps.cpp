// Operators that change a tensor's shape or move its elements without arithmetic: Identity,
// Constant, ConstantOfShape, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Slice, Expand, Tile, Pad, Range, EyeLike, Trilu, DepthToSpace, SpaceToDepth,
// Dropout. Pure data movement dispatches by element size, so every dtype (strings too) is served.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ByteTranspose.h"
#include "OpFamilies.h"
#include "ShapeManipulationCopy.h"

namespace onnxlens::engine::ops {

namespace {

using Inputs = std::vector<const Value*>;
using Outputs = std::vector<Value>;

std::string listToString(const std::vector<std::int64_t>& values) {
    std::string s = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i ? ", " : "") + std::to_string(values[i]);
    return s + "]";
}

// Every element of `out` set to the single element of `scalar` (same dtype).
void fillWithScalar(Tensor& out, const Tensor& scalar) {
    dispatchBySize(out.dtype(), [&]<class U>() {
        const U value = *static_cast<const U*>(scalar.raw());
        std::fill_n(static_cast<U*>(out.raw()), out.numel(), value);
    });
}

// Axes normalized against `rank`, rejecting repeats.
std::vector<std::int64_t> normalizeAxes(const std::vector<std::int64_t>& axes, std::int64_t rank) {
    std::vector<std::int64_t> out;
    out.reserve(axes.size());
    for (std::int64_t axis : axes) {
        const std::int64_t a = normalizeAxis(axis, rank);
        if (std::find(out.begin(), out.end(), a) != out.end())
            throw EngineError("axis " + std::to_string(axis) + " is repeated in " +
                              listToString(axes));
        out.push_back(a);
    }
    return out;
}

StridedView contiguousView(const Tensor& t) { return {t.shape(), shapeStrides(t.shape()), 0}; }

// ---------------------------------------------------------------------------------------------

class IdentityKernel final : public Kernel {
  public:
    explicit IdentityKernel(const NodeInfo&) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        outputs[0] = inputs.empty() || inputs[0] == nullptr ? Value() : *inputs[0];
    }
};

class ConstantKernel final : public Kernel {
  public:
    explicit ConstantKernel(const NodeInfo& node) {
        if (node.hasAttribute("sparse_value"))
            fail("Constant: sparse_value tensors are not supported");
        if (auto t = node.getTensor("value")) {
            value_ = *t;
        } else if (node.hasAttribute("value_float")) {
            value_ = Tensor::scalar<float>(node.getFloat("value_float"));
        } else if (node.hasAttribute("value_floats")) {
            auto v = node.getFloats("value_floats");
            value_ = Tensor::fromVector<float>({static_cast<std::int64_t>(v.size())}, v);
        } else if (node.hasAttribute("value_int")) {
            value_ = Tensor::scalar<std::int64_t>(node.getInt("value_int"));
        } else if (node.hasAttribute("value_ints")) {
            auto v = node.getInts("value_ints");
            value_ = Tensor::fromVector<std::int64_t>({static_cast<std::int64_t>(v.size())}, v);
        } else if (node.hasAttribute("value_string")) {
            value_ = Tensor::scalar<std::string>(node.getString("value_string"));
        } else if (node.hasAttribute("value_strings")) {
            auto v = node.getStrings("value_strings");
            value_ = Tensor::fromVector<std::string>({static_cast<std::int64_t>(v.size())}, v);
        } else {
            fail("Constant: none of the value attributes is set");
        }
    }
    void run(KernelContext&, const Inputs&, Outputs& outputs) override {
        outputs[0] = Value(value_);
    }

  private:
    Tensor value_;
};

class ConstantOfShapeKernel final : public Kernel {
  public:
    explicit ConstantOfShapeKernel(const NodeInfo& node) {
        if (auto t = node.getTensor("value")) {
            require(t->numel() == 1, "ConstantOfShape: 'value' must hold exactly one element");
            value_ = t->reshaped({});
        } else {
            value_ = Tensor::scalar<float>(0.0f);
        }
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& shapeTensor = inputTensor(inputs, 0);
        require(shapeTensor.rank() == 1, [&] {
            return "ConstantOfShape: the shape input must be 1-D, got " +
                   shapeToString(shapeTensor.shape());
        });
        Tensor out(value_.dtype(), shapeTensor.toInt64Vector());
        fillWithScalar(out, value_);
        outputs[0] = Value(std::move(out));
    }

  private:
    Tensor value_;
};

class ShapeKernel final : public Kernel {
  public:
    explicit ShapeKernel(const NodeInfo& node) : start_(node.getInt("start", 0)) {
        if (node.hasAttribute("end")) end_ = node.getInt("end");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t rank = x.rank();
        auto clampToRank = [rank](std::int64_t v) {
            return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank);
        };
        const std::int64_t start = clampToRank(start_);
        const std::int64_t end = end_ ? clampToRank(*end_) : rank;
        std::vector<std::int64_t> dims;
        for (std::int64_t d = start; d < end; ++d) dims.push_back(x.dim(d));
        outputs[0] =
            Value(Tensor::fromVector<std::int64_t>({static_cast<std::int64_t>(dims.size())}, dims));
    }

  private:
    std::int64_t start_;
    std::optional<std::int64_t> end_;
};

class SizeKernel final : public Kernel {
  public:
    explicit SizeKernel(const NodeInfo&) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        outputs[0] = Value(Tensor::scalar<std::int64_t>(inputTensor(inputs, 0).numel()));
    }
};

// Reshape: 0 copies the input dim (unless allowzero), -1 is inferred from the element count.
class ReshapeKernel final : public Kernel {
  public:
    explicit ReshapeKernel(const NodeInfo& node)
        : shapeFromAttribute_(node.opsetVersion() < 5),
          allowZero_(node.getInt("allowzero", 0) != 0) {
        if (shapeFromAttribute_) shapeAttribute_ = node.getInts("shape");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::vector<std::int64_t> requested =
            shapeFromAttribute_ ? shapeAttribute_ : inputTensor(inputs, 1).toInt64Vector();
        outputs[0] = Value(x.reshaped(targetShape(x.shape(), requested)));
    }

  private:
    Shape targetShape(const Shape& input, const std::vector<std::int64_t>& requested) const {
        Shape out(requested.size());
        std::optional<std::size_t> inferred;
        bool hasZero = false;
        std::int64_t known = 1;
        for (std::size_t i = 0; i < requested.size(); ++i) {
            const std::int64_t d = requested[i];
            if (d == -1) {
                if (inferred)
                    fail("Reshape: more than one -1 in the requested shape " +
                         listToString(requested));
                inferred = i;
                continue;
            }
            if (d < -1)
                fail("Reshape: invalid dimension " + std::to_string(d) + " in " +
                     listToString(requested));
            if (d == 0 && !allowZero_) {
                if (i >= input.size())
                    fail("Reshape: dimension " + std::to_string(i) + " is 0 (copy) but the input " +
                         shapeToString(input) + " has no such dimension");
                out[i] = input[i];
            } else {
                hasZero = hasZero || d == 0;
                out[i] = d;
            }
            known = checkedMultiply(known, out[i], "Reshape: the requested shape");
        }
        const std::int64_t count = shapeElementCount(input);
        if (inferred) {
            if (hasZero)
                fail("Reshape: allowzero forbids 0 together with -1 in " + listToString(requested));
            if (known == 0 || count % known != 0)
                fail("Reshape: cannot infer the -1 dimension reshaping " + shapeToString(input) +
                     " to " + listToString(requested));
            out[*inferred] = count / known;
        }
        if (shapeElementCount(out) != count)
            fail("Reshape: cannot reshape " + shapeToString(input) + " (" + std::to_string(count) +
                 " elements) to " + shapeToString(out));
        return out;
    }

    bool shapeFromAttribute_;
    bool allowZero_;
    std::vector<std::int64_t> shapeAttribute_;
};

class FlattenKernel final : public Kernel {
  public:
    explicit FlattenKernel(const NodeInfo& node) : axis_(node.getInt("axis", 1)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t rank = x.rank();
        const std::int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
        if (axis < 0 || axis > rank)
            fail("Flatten: axis " + std::to_string(axis_) + " is out of range for rank " +
                 std::to_string(rank));
        const auto& s = x.shape();
        const std::int64_t outer =
            shapeElementCount(std::span(s.data(), static_cast<std::size_t>(axis)));
        const std::int64_t inner = shapeElementCount(
            std::span(s.data() + axis, s.size() - static_cast<std::size_t>(axis)));
        outputs[0] = Value(x.reshaped({outer, inner}));
    }

  private:
    std::int64_t axis_;
};

// Squeeze and Unsqueeze take axes as an attribute before opset 13 and as an input after.
// Squeeze without axes (or with an empty list, as exporters write) drops every unit dim.
class SqueezeKernel final : public Kernel {
  public:
    explicit SqueezeKernel(const NodeInfo& node) : axesFromInput_(node.opsetVersion() >= 13) {
        if (!axesFromInput_ && node.hasAttribute("axes")) axes_ = node.getInts("axes");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        std::optional<std::vector<std::int64_t>> axes = axes_;
        if (axesFromInput_)
            if (const Tensor* t = optionalInputTensor(inputs, 1)) axes = t->toInt64Vector();
        std::vector<bool> drop(static_cast<std::size_t>(x.rank()), false);
        if (axes && !axes->empty()) {
            for (std::int64_t a : normalizeAxes(*axes, x.rank())) {
                if (x.dim(a) != 1)
                    fail("Squeeze: axis " + std::to_string(a) + " has size " +
                         std::to_string(x.dim(a)) + ", not 1, in shape " +
                         shapeToString(x.shape()));
                drop[static_cast<std::size_t>(a)] = true;
            }
        } else {
            for (std::int64_t d = 0; d < x.rank(); ++d)
                drop[static_cast<std::size_t>(d)] = x.dim(d) == 1;
        }
        Shape out;
        for (std::int64_t d = 0; d < x.rank(); ++d)
            if (!drop[static_cast<std::size_t>(d)]) out.push_back(x.dim(d));
        outputs[0] = Value(x.reshaped(out));
    }

  private:
    bool axesFromInput_;
    std::optional<std::vector<std::int64_t>> axes_;
};

class UnsqueezeKernel final : public Kernel {
  public:
    explicit UnsqueezeKernel(const NodeInfo& node) : axesFromInput_(node.opsetVersion() >= 13) {
        if (!axesFromInput_) axes_ = node.getInts("axes");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::vector<std::int64_t> axes =
            axesFromInput_ ? inputTensor(inputs, 1).toInt64Vector() : axes_;
        const std::int64_t outRank = x.rank() + static_cast<std::int64_t>(axes.size());
        std::vector<bool> inserted(static_cast<std::size_t>(outRank), false);
        for (std::int64_t a : normalizeAxes(axes, outRank))
            inserted[static_cast<std::size_t>(a)] = true;
        Shape out;
        std::int64_t next = 0;
        for (std::int64_t d = 0; d < outRank; ++d)
            out.push_back(inserted[static_cast<std::size_t>(d)] ? 1 : x.dim(next++));
        outputs[0] = Value(x.reshaped(out));
    }

  private:
    bool axesFromInput_;
    std::vector<std::int64_t> axes_;
};

// Transpose: the identity permutation shares the input; other permutations are a strided copy
// (which tiles batches of 2-D transposes).
class TransposeKernel final : public Kernel {
  public:
    explicit TransposeKernel(const NodeInfo& node) : perm_(node.getInts("perm")) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t rank = x.rank();
        std::vector<std::int64_t> perm = perm_;
        if (perm.empty()) {
            perm.resize(static_cast<std::size_t>(rank));
            std::iota(perm.rbegin(), perm.rend(), 0);
        }
        if (static_cast<std::int64_t>(perm.size()) != rank)
            fail("Transpose: perm " + listToString(perm) + " does not match rank " +
                 std::to_string(rank));
        std::vector<bool> seen(static_cast<std::size_t>(rank), false);
        bool identity = true;
        for (std::size_t i = 0; i < perm.size(); ++i) {
            const std::int64_t p = perm[i] < 0 ? perm[i] + rank : perm[i];
            if (p < 0 || p >= rank || seen[static_cast<std::size_t>(p)])
                fail("Transpose: perm " + listToString(perm_) + " is not a permutation of rank " +
                     std::to_string(rank));
            seen[static_cast<std::size_t>(p)] = true;
            perm[i] = p;
            identity = identity && p == static_cast<std::int64_t>(i);
        }
        if (identity) {
            outputs[0] = Value(x);
            return;
        }
        if (dataTypeSize(x.dtype()) == 1 && moveBytesAxis(ctx, x, perm, outputs)) return;
        const auto strides = shapeStrides(x.shape());
        StridedView view;
        for (std::int64_t p : perm) {
            view.shape.push_back(x.dim(p));
            view.strides.push_back(strides[static_cast<std::size_t>(p)]);
        }
        outputs[0] = Value(copyStridedView(x, view, &ctx.pool()));
    }

  private:
    // A 1-byte tensor whose perm moves one axis k to the end ([A, B, C] -> [A, C, B] with B the
    // axis: an 8-bit image to channels-last) or the last axis to k (the way back): batches of
    // 2-D byte transposes (ByteTranspose.h). copyStridedView finds the same transposes in the
    // coalesced view, but building the view cost more than the copy of a small tensor: the
    // QOperator MobileNetV2's two Transposes took 16-19 and 6-7 us through it, 14-16 and 4-5 here
    // (1 thread, medians of 150 runs, three alternating rounds).
    static bool moveBytesAxis(KernelContext& ctx, const Tensor& x,
                              const std::vector<std::int64_t>& perm, Outputs& outputs) {
        const auto rank = static_cast<std::int64_t>(perm.size());
        auto dims = [&](std::int64_t from, std::int64_t to) {
            std::int64_t n = 1;
            for (std::int64_t d = from; d < to; ++d) n *= x.dim(d);
            return n;
        };
        // The first axis that moved, and where the two forms put the rest.
        std::int64_t k = 0;
        while (k < rank && perm[static_cast<std::size_t>(k)] == k) ++k;
        if (k >= rank - 1) return false;
        bool toEnd = perm[static_cast<std::size_t>(rank - 1)] == k,
             toK = perm[static_cast<std::size_t>(k)] == rank - 1;
        for (std::int64_t i = k; i < rank - 1; ++i)
            toEnd = toEnd && perm[static_cast<std::size_t>(i)] == i + 1;
        for (std::int64_t i = k + 1; i < rank; ++i)
            toK = toK && perm[static_cast<std::size_t>(i)] == i - 1;
        if (!toEnd && !toK) return false;
        const std::int64_t batch = dims(0, k);
        // Rows and columns of each batch's 2-D transpose.
        const std::int64_t rows = toEnd ? x.dim(k) : dims(k, rank - 1);
        const std::int64_t cols = toEnd ? dims(k + 1, rank) : x.dim(rank - 1);
        Shape shape;
        for (std::int64_t p : perm) shape.push_back(x.dim(p));
        Tensor y(x.dtype(), shape);
        const auto* in = static_cast<const std::uint8_t*>(x.raw());
        auto* out = static_cast<std::uint8_t*>(y.raw());
        ctx.pool().parallelFor(batch, static_cast<double>(rows * cols),
                               [&](std::int64_t b, std::int64_t e) {
                                   for (std::int64_t n = b; n < e; ++n)
                                       transposeBytes(in + n * rows * cols, rows, cols, cols,
                                                      out + n * rows * cols, rows);
                               });
        outputs[0] = Value(std::move(y));
        return true;
    }

    std::vector<std::int64_t> perm_;
};

class ConcatKernel final : public Kernel {
  public:
    explicit ConcatKernel(const NodeInfo& node)
        : axis_(node.opsetVersion() < 4 ? node.getInt("axis", 1) : node.getInt("axis")) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        require(!inputs.empty(), "Concat needs at least one input");
        const Tensor& first = inputTensor(inputs, 0);
        const std::int64_t rank = first.rank();
        require(rank > 0, "Concat: scalars cannot be concatenated");
        const std::int64_t axis = normalizeAxis(axis_, rank);
        Shape outShape = first.shape();
        outShape[static_cast<std::size_t>(axis)] = 0;
        std::vector<const Tensor*> parts;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Tensor& t = inputTensor(inputs, i);
            if (t.dtype() != first.dtype())
                fail(std::string("Concat: input ") + std::to_string(i) + " is " +
                     dataTypeName(t.dtype()) + ", input 0 is " + dataTypeName(first.dtype()));
            bool compatible = t.rank() == rank;
            for (std::int64_t d = 0; compatible && d < rank; ++d)
                compatible = d == axis || t.dim(d) == first.dim(d);
            if (!compatible)
                fail("Concat: input " + std::to_string(i) + " has shape " +
                     shapeToString(t.shape()) + ", which does not match " +
                     shapeToString(first.shape()) + " outside axis " + std::to_string(axis));
            outShape[static_cast<std::size_t>(axis)] += t.dim(axis);
            if (t.numel() > 0) parts.push_back(&t);
        }
        Tensor out(first.dtype(), outShape);
        const std::int64_t outer =
            shapeElementCount(std::span(outShape.data(), static_cast<std::size_t>(axis)));
        const std::int64_t inner =
            out.numel() == 0 ? 0 : out.numel() / outer / outShape[static_cast<std::size_t>(axis)];
        const std::int64_t outChunk = outShape[static_cast<std::size_t>(axis)] * inner;
        if (out.numel() > 0) {
            dispatchBySize(first.dtype(), [&]<class U>() {
                U* dst = static_cast<U*>(out.raw());
                ctx.pool().parallelFor(
                    outer, static_cast<double>(outChunk), [&](std::int64_t b, std::int64_t e) {
                        for (std::int64_t o = b; o < e; ++o) {
                            U* row = dst + o * outChunk;
                            for (const Tensor* part : parts) {
                                const std::int64_t chunk = part->dim(axis) * inner;
                                const U* src = static_cast<const U*>(part->raw()) + o * chunk;
                                row = std::copy(src, src + chunk, row);
                            }
                        }
                    });
            });
        }
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
};

// Split: sizes from the `split` attribute (opset < 13, also an input in opset 1), the `split`
// input (opset >= 13), or equal parts (`num_outputs` of opset 18 allows a smaller last part).
class SplitKernel final : public Kernel {
  public:
    explicit SplitKernel(const NodeInfo& node)
        : opset_(node.opsetVersion()),
          axis_(node.getInt("axis", 0)),
          splitAttribute_(node.getInts("split")),
          numOutputs_(node.getInt("num_outputs", 0)) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t axis = normalizeAxis(axis_, x.rank());
        const std::int64_t dim = x.dim(axis);
        const auto n = static_cast<std::int64_t>(outputs.size());
        std::vector<std::int64_t> sizes = splitAttribute_;
        if (opset_ >= 13 || opset_ == 1)
            if (const Tensor* t = optionalInputTensor(inputs, 1)) sizes = t->toInt64Vector();
        if (sizes.empty()) {
            if (numOutputs_ > 0) {
                const std::int64_t part = (dim + n - 1) / n;
                for (std::int64_t i = 0; i < n; ++i)
                    sizes.push_back(std::clamp<std::int64_t>(dim - i * part, 0, part));
            } else {
                if (dim % n != 0)
                    fail("Split: axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                         " cannot be split into " + std::to_string(n) + " equal parts");
                sizes.assign(static_cast<std::size_t>(n), dim / n);
            }
        }
        if (static_cast<std::int64_t>(sizes.size()) != n)
            fail("Split: " + std::to_string(sizes.size()) + " split sizes for " +
                 std::to_string(n) + " outputs");
        std::int64_t total = 0;
        for (std::int64_t s : sizes) {
            if (s < 0 || s > dim)
                fail("Split: split size " + std::to_string(s) + " in " + listToString(sizes) +
                     " is outside [0, " + std::to_string(dim) + "]");
            total += s;
        }
        if (total != dim)
            fail("Split: sizes " + listToString(sizes) + " do not add up to the size " +
                 std::to_string(dim) + " of axis " + std::to_string(axis));
        StridedView view = contiguousView(x);
        for (std::int64_t i = 0; i < n; ++i) {
            view.shape[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(i)];
            outputs[static_cast<std::size_t>(i)] = Value(copyStridedView(x, view, &ctx.pool()));
            view.offset +=
                sizes[static_cast<std::size_t>(i)] * view.strides[static_cast<std::size_t>(axis)];
        }
    }

  private:
    int opset_;
    std::int64_t axis_;
    std::vector<std::int64_t> splitAttribute_;
    std::int64_t numOutputs_;
};

// Slice: attributes before opset 10, inputs after; negative steps and numpy clamping of
// out-of-range starts and ends.
class SliceKernel final : public Kernel {
  public:
    explicit SliceKernel(const NodeInfo& node) : fromAttributes_(node.opsetVersion() < 10) {
        if (fromAttributes_) {
            starts_ = node.getInts("starts");
            ends_ = node.getInts("ends");
            axes_ = node.getInts("axes");
        }
    }
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        std::vector<std::int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
        if (!fromAttributes_) {
            starts = inputTensor(inputs, 1).toInt64Vector();
            ends = inputTensor(inputs, 2).toInt64Vector();
            if (const Tensor* t = optionalInputTensor(inputs, 3)) axes = t->toInt64Vector();
            if (const Tensor* t = optionalInputTensor(inputs, 4)) steps = t->toInt64Vector();
        }
        if (starts.size() != ends.size())
            fail("Slice: " + std::to_string(starts.size()) + " starts but " +
                 std::to_string(ends.size()) + " ends");
        if (axes.empty()) {
            axes.resize(starts.size());
            std::iota(axes.begin(), axes.end(), 0);
        }
        if (steps.empty()) steps.assign(starts.size(), 1);
        if (axes.size() != starts.size() || steps.size() != starts.size())
            fail("Slice: starts, ends, axes and steps must have the same length");
        axes = normalizeAxes(axes, x.rank());

        StridedView view = contiguousView(x);
        for (std::size_t k = 0; k < axes.size(); ++k) {
            const auto axis = static_cast<std::size_t>(axes[k]);
            const std::int64_t step = steps[k], dim = x.dim(axes[k]);
            if (step == 0) fail("Slice: step 0 on axis " + std::to_string(axis));
            std::int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
            std::int64_t end = ends[k] < 0 ? ends[k] + dim : ends[k];
            std::int64_t count = 0;
            if (dim > 0 && step > 0) {
                start = std::clamp<std::int64_t>(start, 0, dim);
                end = std::clamp<std::int64_t>(end, 0, dim);
                if (end > start) count = (end - start - 1) / step + 1;
            } else if (dim > 0) {
                start = std::clamp<std::int64_t>(start, 0, dim - 1);
                end = std::clamp<std::int64_t>(end, -1, dim - 1);
                if (start > end) {
                    const std::int64_t back = step == std::numeric_limits<std::int64_t>::min()
                                                  ? std::numeric_limits<std::int64_t>::max()
                                                  : -step;
                    count = (start - end - 1) / back + 1;
                }
            }
            if (count > 0) view.offset += start * view.strides[axis];
            view.shape[axis] = count;
            if (count > 1) view.strides[axis] *= step;
        }
        outputs[0] = Value(copyStridedView(x, view, &ctx.pool()));
    }

  private:
    bool fromAttributes_;
    std::vector<std::int64_t> starts_, ends_, axes_;
};

class ExpandKernel final : public Kernel {
  public:
    explicit ExpandKernel(const NodeInfo&) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& shapeTensor = inputTensor(inputs, 1);
        require(shapeTensor.rank() == 1, [&] {
            return "Expand: the shape input must be 1-D, got " + shapeToString(shapeTensor.shape());
        });
        const Shape outShape = broadcastShapes(x.shape(), shapeTensor.toInt64Vector());
        StridedView view{outShape, broadcastStrides(x.shape(), outShape), 0};
        outputs[0] = Value(copyStridedView(x, view, &ctx.pool()));
    }
};

// Tile is a strided copy over the shape [r0, d0, r1, d1, ...] whose repeat dims have stride 0:
// its row-major order is exactly the tiled output's.
class TileKernel final : public Kernel {
  public:
    explicit TileKernel(const NodeInfo& node) : legacy_(node.opsetVersion() < 6) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        std::vector<std::int64_t> repeats;
        if (legacy_) {
            // Opset 1: a scalar count of tiles along a scalar axis.
            repeats.assign(static_cast<std::size_t>(x.rank()), 1);
            const std::int64_t axis =
                normalizeAxis(inputTensor(inputs, 2).valueAsInt64(0), x.rank());
            repeats[static_cast<std::size_t>(axis)] = inputTensor(inputs, 1).valueAsInt64(0);
        } else {
            repeats = inputTensor(inputs, 1).toInt64Vector();
        }
        if (static_cast<std::int64_t>(repeats.size()) != x.rank())
            fail("Tile: repeats " + listToString(repeats) + " do not match the rank of " +
                 shapeToString(x.shape()));
        const auto strides = shapeStrides(x.shape());
        StridedView view;
        Shape outShape;
        for (std::int64_t d = 0; d < x.rank(); ++d) {
            const std::int64_t r = repeats[static_cast<std::size_t>(d)];
            if (r < 0) fail("Tile: negative repeat count in " + listToString(repeats));
            view.shape.insert(view.shape.end(), {r, x.dim(d)});
            view.strides.insert(view.strides.end(), {0, strides[static_cast<std::size_t>(d)]});
            outShape.push_back(checkedMultiply(r, x.dim(d), "Tile: the output shape"));
        }
        outputs[0] = Value(copyStridedView(x, view, &ctx.pool()).reshaped(outShape));
    }

  private:
    bool legacy_;
};

// Pad: every output index maps, per dim, to a source index or to the constant (-1); negative
// pads crop. Modes constant, reflect, edge and wrap.
class PadKernel final : public Kernel {
  public:
    enum class Mode { Constant, Reflect, Edge, Wrap };

    explicit PadKernel(const NodeInfo& node) : opset_(node.opsetVersion()) {
        const std::string mode = node.getString("mode", "constant");
        if (mode == "constant")
            mode_ = Mode::Constant;
        else if (mode == "reflect")
            mode_ = Mode::Reflect;
        else if (mode == "edge")
            mode_ = Mode::Edge;
        else if (mode == "wrap")
            mode_ = Mode::Wrap;
        else
            fail("Pad: unsupported mode '" + mode + "'");
        if (opset_ < 11) {
            pads_ = node.getInts(opset_ < 2 ? "paddings" : "pads");
            value_ = node.getFloat("value", 0.0f);
        }
    }

    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::int64_t rank = x.rank();
        std::vector<std::int64_t> pads = pads_;
        Tensor fill;
        if (opset_ >= 11) {
            pads = inputTensor(inputs, 1).toInt64Vector();
            const Tensor* value = optionalInputTensor(inputs, 2);
            if (value && value->numel() > 0) {
                if (value->dtype() != x.dtype())
                    fail(std::string("Pad: constant_value is ") + dataTypeName(value->dtype()) +
                         ", the data is " + dataTypeName(x.dtype()));
                fill = *value;
            }
            if (const Tensor* axesTensor = optionalInputTensor(inputs, 3))
                pads = padsForAllAxes(pads, axesTensor->toInt64Vector(), rank);
        }
        if (!fill.defined()) {
            fill = x.dtype() == DataType::String || opset_ >= 11
                       ? Tensor::zeros(x.dtype(), {})
                       : Tensor::scalar<float>(value_).castTo(x.dtype());
        }
        if (static_cast<std::int64_t>(pads.size()) != 2 * rank)
            fail("Pad: " + std::to_string(pads.size()) + " pads for a tensor of rank " +
                 std::to_string(rank));

        Shape outShape(static_cast<std::size_t>(rank));
        std::vector<std::vector<std::int64_t>> sourceIndex(static_cast<std::size_t>(rank));
        for (std::int64_t d = 0; d < rank; ++d) {
            const auto du = static_cast<std::size_t>(d);
            outShape[du] =
                checkedAdd(checkedAdd(x.dim(d), pads[du], "Pad: the output shape"),
                           pads[du + static_cast<std::size_t>(rank)], "Pad: the output shape");
            if (outShape[du] < 0)
                fail("Pad: pads " + listToString(pads) + " crop more than the size " +
                     std::to_string(x.dim(d)) + " of axis " + std::to_string(d));
        }
        // Allocating first bounds every dim (and so the index maps) by the memory limit.
        Tensor out(x.dtype(), outShape);
        if (out.numel() == 0) {
            outputs[0] = Value(std::move(out));
            return;
        }
        for (std::int64_t d = 0; d < rank; ++d) {
            const auto du = static_cast<std::size_t>(d);
            sourceIndex[du] = sourceIndices(x.dim(d), pads[du], outShape[du], d);
        }
        if (rank == 0) {
            outputs[0] = Value(x.clone());
            return;
        }
        const auto inStrides = shapeStrides(x.shape());
        const std::int64_t inner = outShape.back();
        const std::int64_t rows = out.numel() / inner;
        const std::vector<std::int64_t>& lastMap = sourceIndex.back();
        // Output positions [copyBegin, copyEnd) of the last dim read the input contiguously.
        const std::int64_t copyBegin =
            std::clamp<std::int64_t>(pads[static_cast<std::size_t>(rank - 1)], 0, inner);
        const std::int64_t copyEnd = std::clamp<std::int64_t>(
            pads[static_cast<std::size_t>(rank - 1)] + x.dim(rank - 1), copyBegin, inner);

        dispatchBySize(x.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(x.raw());
            U* dst = static_cast<U*>(out.raw());
            const U fillValue = *static_cast<const U*>(fill.raw());
            ctx.pool().parallelFor(
                rows, static_cast<double>(inner), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t row = b; row < e; ++row) {
                        U* line = dst + row * inner;
                        std::int64_t offset = 0, rest = row;
                        bool constantRow = false;
                        for (std::int64_t d = rank - 2; d >= 0; --d) {
                            const auto du = static_cast<std::size_t>(d);
                            const std::int64_t src =
                                sourceIndex[du][static_cast<std::size_t>(rest % outShape[du])];
                            rest /= outShape[du];
                            if (src < 0)
                                constantRow = true;
                            else
                                offset += src * inStrides[du];
                        }
                        if (constantRow) {
                            std::fill(line, line + inner, fillValue);
                            continue;
                        }
                        const U* srcLine = in + offset;
                        auto mapped = [&](std::int64_t o) {
                            const std::int64_t s = lastMap[static_cast<std::size_t>(o)];
                            line[o] = s < 0 ? fillValue : srcLine[s];
                        };
                        for (std::int64_t o = 0; o < copyBegin; ++o) mapped(o);
                        std::copy(srcLine + (copyBegin - pads[static_cast<std::size_t>(rank - 1)]),
                                  srcLine + (copyEnd - pads[static_cast<std::size_t>(rank - 1)]),
                                  line + copyBegin);
                        for (std::int64_t o = copyEnd; o < inner; ++o) mapped(o);
                    }
                });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    // Opset 18's `axes` input: pads given only for some axes.
    static std::vector<std::int64_t> padsForAllAxes(const std::vector<std::int64_t>& pads,
                                                    const std::vector<std::int64_t>& axes,
                                                    std::int64_t rank) {
        if (pads.size() != 2 * axes.size())
            fail("Pad: " + std::to_string(pads.size()) + " pads for " +
                 std::to_string(axes.size()) + " axes");
        std::vector<std::int64_t> all(static_cast<std::size_t>(2 * rank), 0);
        const auto normalized = normalizeAxes(axes, rank);
        for (std::size_t i = 0; i < normalized.size(); ++i) {
            all[static_cast<std::size_t>(normalized[i])] = pads[i];
            all[static_cast<std::size_t>(normalized[i] + rank)] = pads[i + axes.size()];
        }
        return all;
    }

    std::vector<std::int64_t> sourceIndices(std::int64_t dim, std::int64_t before,
                                            std::int64_t outDim, std::int64_t axis) const {
        std::vector<std::int64_t> map(static_cast<std::size_t>(outDim));
        if (dim == 0 && outDim > 0 && mode_ != Mode::Constant)
            fail("Pad: axis " + std::to_string(axis) +
                 " is empty and cannot be padded in this mode");
        for (std::int64_t o = 0; o < outDim; ++o) {
            std::int64_t i = o - before;
            if (i < 0 || i >= dim) {
                switch (mode_) {
                    case Mode::Constant:
                        i = -1;
                        break;
                    case Mode::Edge:
                        i = std::clamp<std::int64_t>(i, 0, dim - 1);
                        break;
                    case Mode::Wrap:
                        i = ((i % dim) + dim) % dim;
                        break;
                    case Mode::Reflect: {
                        if (dim == 1) {
                            i = 0;
                            break;
                        }
                        const std::int64_t period = 2 * (dim - 1);
                        i = ((i % period) + period) % period;
                        if (i >= dim) i = period - i;
                        break;
                    }
                }
            }
            map[static_cast<std::size_t>(o)] = i;
        }
        return map;
    }

    int opset_;
    Mode mode_ = Mode::Constant;
    std::vector<std::int64_t> pads_;
    float value_ = 0.0f;
};

// CenterCropPad (opset 18): each listed axis cropped or zero-padded, centered, to its target
// size; the odd element goes to the end. It is a Pad with per-axis pads (negative ones crop).
class CenterCropPadKernel final : public Kernel {
  public:
    explicit CenterCropPadKernel(const NodeInfo& node) : axes_(node.getInts("axes")), pad_(node) {}

    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const std::vector<std::int64_t> target = inputTensor(inputs, 1).toInt64Vector();
        const std::int64_t rank = x.rank();
        std::vector<std::int64_t> axes = axes_;
        if (axes.empty())
            for (std::int64_t d = 0; d < rank; ++d) axes.push_back(d);
        if (target.size() != axes.size())
            fail("CenterCropPad: shape has " + std::to_string(target.size()) + " sizes for " +
                 std::to_string(axes.size()) + " axes");
        std::vector<std::int64_t> pads(static_cast<std::size_t>(2 * rank), 0);
        std::vector<bool> seen(static_cast<std::size_t>(rank), false);
        for (std::size_t k = 0; k < axes.size(); ++k) {
            const std::int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
            if (axis < 0 || axis >= rank)
                fail("CenterCropPad: axis " + std::to_string(axes[k]) + " is outside rank " +
                     std::to_string(rank));
            if (seen[static_cast<std::size_t>(axis)])
                fail("CenterCropPad: axis " + std::to_string(axes[k]) + " is listed twice");
            seen[static_cast<std::size_t>(axis)] = true;
            if (target[k] < 0)
                fail("CenterCropPad: negative target size " + std::to_string(target[k]));
            const std::int64_t difference = target[k] - x.dim(axis);  // > 0 pads, < 0 crops
            const std::int64_t magnitude = difference < 0 ? -difference : difference;
            const std::int64_t sign = difference < 0 ? -1 : 1;
            pads[static_cast<std::size_t>(axis)] = sign * (magnitude / 2);
            pads[static_cast<std::size_t>(axis + rank)] = sign * (magnitude - magnitude / 2);
        }
        const Value padsValue(Tensor::fromVector<std::int64_t>({2 * rank}, pads));
        const Inputs padInputs = {inputs[0], &padsValue};
        pad_.run(ctx, padInputs, outputs);
    }

  private:
    std::vector<std::int64_t> axes_;
    PadKernel pad_;
};

class RangeKernel final : public Kernel {
  public:
    explicit RangeKernel(const NodeInfo&) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& start = inputTensor(inputs, 0);
        const Tensor& limit = inputTensor(inputs, 1);
        const Tensor& delta = inputTensor(inputs, 2);
        require(start.numel() == 1 && limit.numel() == 1 && delta.numel() == 1,
                "Range: start, limit and delta must be scalars");
        require(start.dtype() == limit.dtype() && start.dtype() == delta.dtype(),
                "Range: start, limit and delta must have the same type");
        outputs[0] = dispatchNumeric(start.dtype(), [&]<class T>() {
            const T first = *start.data<T>(), last = *limit.data<T>(), step = *delta.data<T>();
            std::int64_t count = 0;
            if constexpr (std::is_integral_v<T>) {
                if (step == 0) fail("Range: delta is 0");
                // Exact ceil((last - first) / step) in wide arithmetic.
                const auto span = static_cast<long double>(last) - static_cast<long double>(first);
                count = countFromFloating(std::ceil(span / static_cast<long double>(step)),
                                          "Range: the element count");
            } else {
                const double d = toDouble(step);
                if (d == 0.0) fail("Range: delta is 0");
                count = countFromFloating(std::ceil((toDouble(last) - toDouble(first)) / d),
                                          "Range: the element count");
            }
            Tensor out(start.dtype(), {std::max<std::int64_t>(count, 0)});
            T* values = out.data<T>();
            for (std::int64_t i = 0; i < out.numel(); ++i) {
                if constexpr (std::is_integral_v<T>)
                    values[i] = static_cast<T>(first + static_cast<T>(i) * step);
                else
                    values[i] =
                        static_cast<T>(toDouble(first) + static_cast<double>(i) * toDouble(step));
            }
            return Value(std::move(out));
        });
    }
};

class EyeLikeKernel final : public Kernel {
  public:
    explicit EyeLikeKernel(const NodeInfo& node) : k_(node.getInt("k", 0)) {
        if (node.hasAttribute("dtype"))
            dtype_ = dataTypeFromOnnx(static_cast<int>(node.getInt("dtype")));
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() == 2,
                [&] { return "EyeLike: the input must be 2-D, got " + shapeToString(x.shape()); });
        const DataType type = dtype_.value_or(x.dtype());
        Tensor out = Tensor::zeros(type, x.shape());
        const std::int64_t rows = x.dim(0), cols = x.dim(1);
        dispatchNumericOrBool(type, [&]<class T>() {
            T* values = out.data<T>();
            if (k_ >= cols || k_ <= -rows) return;  // the diagonal misses the matrix
            for (std::int64_t r = std::max<std::int64_t>(0, -k_); r < rows && r + k_ < cols; ++r)
                values[r * cols + r + k_] = static_cast<T>(1.0f);
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t k_;
    std::optional<DataType> dtype_;
};

// Trilu keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims.
class TriluKernel final : public Kernel {
  public:
    explicit TriluKernel(const NodeInfo& node) : upper_(node.getInt("upper", 1) != 0) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() >= 2, [&] {
            return "Trilu: the input must have rank >= 2, got " + shapeToString(x.shape());
        });
        const Tensor* kTensor = optionalInputTensor(inputs, 1);
        const std::int64_t k = kTensor ? kTensor->valueAsInt64(0) : 0;
        const std::int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
        const std::int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
        Tensor out(x.dtype(), x.shape());
        dispatchBySize(x.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(x.raw());
            U* dst = static_cast<U*>(out.raw());
            for (std::int64_t m = 0; m < matrices; ++m)
                for (std::int64_t r = 0; r < rows; ++r)
                    for (std::int64_t c = 0; c < cols; ++c) {
                        const std::int64_t i = (m * rows + r) * cols + c;
                        const bool keep = upper_ ? c - r >= k : c - r <= k;
                        dst[i] = keep ? in[i] : U{};
                    }
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    bool upper_;
};

std::int64_t positiveBlockSize(const NodeInfo& node) {
    const std::int64_t b = node.getInt("blocksize");
    if (b <= 0) fail("blocksize must be positive, got " + std::to_string(b));
    return b;
}

// DepthToSpace reads the input as [N, C', H, b, W, b] through channel strides that depend on
// the mode: DCR splits the channel as (b1, b2, c), CRD as (c, b1, b2).
class DepthToSpaceKernel final : public Kernel {
  public:
    explicit DepthToSpaceKernel(const NodeInfo& node) : block_(positiveBlockSize(node)) {
        const std::string mode = node.getString("mode", "DCR");
        if (mode != "DCR" && mode != "CRD") fail("DepthToSpace: unknown mode '" + mode + "'");
        columnRowDepth_ = mode == "CRD";
    }
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() == 4, [&] {
            return "DepthToSpace: the input must be 4-D, got " + shapeToString(x.shape());
        });
        const std::int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
        if (c % (b * b) != 0)
            fail("DepthToSpace: channels " + std::to_string(c) +
                 " are not divisible by blocksize^2 = " + std::to_string(b * b));
        const std::int64_t depth = c / (b * b);
        const std::int64_t sc = h * w, sn = c * sc;
        StridedView view;
        view.shape = {n, depth, h, b, w, b};
        if (columnRowDepth_)
            view.strides = {sn, b * b * sc, w, b * sc, 1, sc};
        else
            view.strides = {sn, sc, w, b * depth * sc, 1, depth * sc};
        outputs[0] =
            Value(copyStridedView(x, view, &ctx.pool()).reshaped({n, depth, h * b, w * b}));
    }

  private:
    std::int64_t block_;
    bool columnRowDepth_ = false;
};

class SpaceToDepthKernel final : public Kernel {
  public:
    explicit SpaceToDepthKernel(const NodeInfo& node) : block_(positiveBlockSize(node)) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() == 4, [&] {
            return "SpaceToDepth: the input must be 4-D, got " + shapeToString(x.shape());
        });
        const std::int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
        if (h % b != 0 || w % b != 0)
            fail("SpaceToDepth: spatial size " + std::to_string(h) + "x" + std::to_string(w) +
                 " is not divisible by blocksize " + std::to_string(b));
        const std::int64_t sc = h * w, sn = c * sc;
        StridedView view{{n, b, b, c, h / b, w / b}, {sn, w, 1, sc, b * w, b}, 0};
        outputs[0] =
            Value(copyStridedView(x, view, &ctx.pool()).reshaped({n, c * b * b, h / b, w / b}));
    }

  private:
    std::int64_t block_;
};

// Dropout: in inference it is the identity with an all-true mask. In training mode (opset 12+
// `training_mode` input) elements are zeroed with probability `ratio` and the rest scaled by
// 1 / (1 - ratio); the `seed` attribute makes that reproducible. Opsets before 7 are treated as
// inference whatever `is_test` says, as inference runtimes do.
class DropoutKernel final : public Kernel {
  public:
    explicit DropoutKernel(const NodeInfo& node)
        : opset_(node.opsetVersion()), ratio_(node.getFloat("ratio", 0.5f)) {
        if (node.hasAttribute("seed")) seed_ = static_cast<std::uint64_t>(node.getInt("seed"));
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        double ratio = ratio_;
        bool training = false;
        if (opset_ >= 12) {
            if (const Tensor* r = optionalInputTensor(inputs, 1)) ratio = r->valueAsDouble(0);
            if (const Tensor* t = optionalInputTensor(inputs, 2))
                training = t->valueAsInt64(0) != 0;
        }
        const bool boolMask = opset_ >= 10;
        if (!training || ratio == 0.0) {
            outputs[0] = Value(x);
            if (outputs.size() > 1) {
                Tensor mask(boolMask ? DataType::Bool : x.dtype(), x.shape());
                if (boolMask)
                    std::fill_n(mask.data<bool>(), mask.numel(), true);
                else
                    fillWithScalar(mask, Tensor::scalar<float>(1.0f).castTo(x.dtype()));
                outputs[1] = Value(std::move(mask));
            }
            return;
        }
        if (ratio < 0.0 || ratio >= 1.0)
            fail("Dropout: ratio " + std::to_string(ratio) + " is outside [0, 1)");
        std::mt19937_64 generator(seed_ ? *seed_ : std::random_device{}());
        std::bernoulli_distribution keep(1.0 - ratio);
        const double scale = 1.0 / (1.0 - ratio);
        Tensor out(x.dtype(), x.shape());
        Tensor mask(DataType::Bool, x.shape());
        bool* kept = mask.data<bool>();
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* dst = out.data<T>();
            for (std::int64_t i = 0; i < x.numel(); ++i) {
                kept[i] = keep(generator);
                dst[i] = kept[i] ? static_cast<T>(toDouble(in[i]) * scale) : static_cast<T>(0.0f);
            }
        });
        outputs[0] = Value(std::move(out));
        if (outputs.size() > 1) outputs[1] = Value(std::move(mask));
    }

  private:
    int opset_;
    float ratio_;
    std::optional<std::uint64_t> seed_;
};

}  // namespace

void registerShapeManipulationOps(KernelRegistry& registry) {
    registry.add<IdentityKernel>("Identity");
    registry.add<ConstantKernel>("Constant");
    registry.add<ConstantOfShapeKernel>("ConstantOfShape", 9);
    registry.add<ShapeKernel>("Shape");
    registry.add<SizeKernel>("Size");
    registry.add<ReshapeKernel>("Reshape");
    registry.add<FlattenKernel>("Flatten");
    registry.add<SqueezeKernel>("Squeeze");
    registry.add<UnsqueezeKernel>("Unsqueeze");
    registry.add<TransposeKernel>("Transpose");
    registry.add<ConcatKernel>("Concat");
    registry.add<SplitKernel>("Split");
    registry.add<SliceKernel>("Slice");
    registry.add<ExpandKernel>("Expand", 8);
    registry.add<TileKernel>("Tile");
    registry.add<PadKernel>("Pad");
    registry.add<CenterCropPadKernel>("CenterCropPad", 18);
    registry.add<RangeKernel>("Range", 11);
    registry.add<EyeLikeKernel>("EyeLike", 9);
    registry.add<TriluKernel>("Trilu", 14);
    registry.add<DepthToSpaceKernel>("DepthToSpace");
    registry.add<SpaceToDepthKernel>("SpaceToDepth");
    registry.add<DropoutKernel>("Dropout");
}

}  // namespace onnxlens::engine::ops
