// Operators that select, place or rank elements by index: Gather, GatherElements, GatherND,
// Scatter, ScatterElements, ScatterND, OneHot, Compress, NonZero, Unique, TopK, ArgMax, ArgMin,
// CumSum, ReverseSequence, TensorScatter (opset 24's KV-cache update). Negative indices count
// from the end; out-of-range indices are an
// EngineError naming the index and the size of its axis.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "OpFamilies.h"
#include "SequenceTensorCopy.h"
#include "ShapeManipulationCopy.h"

namespace onnxlens::engine::ops {

namespace {

using Inputs = std::vector<const Value*>;
using Outputs = std::vector<Value>;

std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
    return shapeElementCount(std::span(shape.data() + begin, end - begin));
}

// Sizes around an axis: outer (dims before), dim, inner (dims after).
struct AxisSplit {
    std::int64_t outer, dim, inner;
};
AxisSplit splitAt(const Shape& shape, std::int64_t axis) {
    const auto a = static_cast<std::size_t>(axis);
    return {product(shape, 0, a), shape[a], product(shape, a + 1, shape.size())};
}

// A strict weak order for every comparable element type: NaN sorts after every number and
// equal to itself, so sorting and ranking never meet an inconsistent comparison.
template <class T>
bool orderedLess(const T& a, const T& b) {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16>) {
        const double x = toDouble(a), y = toDouble(b);
        if (std::isnan(x)) return false;
        if (std::isnan(y)) return true;
        return x < y;
    } else {
        return a < b;
    }
}

// Numbers, bools and strings: the element types that can be ordered.
template <class F>
decltype(auto) dispatchOrdered(DataType type, F&& f) {
    if (type == DataType::String) return f.template operator()<std::string>();
    return dispatchNumericOrBool(type, std::forward<F>(f));
}

// The accumulator type for sums of T: float for the 16-bit floats, T otherwise.
template <class T>
using Accumulator =
    std::conditional_t<std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float, T>;

// For GatherElements and ScatterElements: calls fn(i, dataOffset) for element i of an index
// tensor of `indexShape` (rank of the data), where dataOffset addresses the data element at
// the same position except along `axis`, whose coordinate is the (normalized) index value.
template <class F>
void forEachIndexedElement(const Shape& indexShape, const std::vector<std::int64_t>& indices,
                           const Shape& dataShape, std::int64_t axis, F&& fn) {
    const auto rank = indexShape.size();
    const auto dataStrides = shapeStrides(dataShape);
    for (std::size_t d = 0; d < rank; ++d)
        if (static_cast<std::int64_t>(d) != axis && indexShape[d] > dataShape[d])
            fail("indices of shape " + shapeToString(indexShape) + " exceed the data of shape " +
                 shapeToString(dataShape) + " on axis " + std::to_string(d));
    const std::int64_t count = shapeElementCount(indexShape);
    const auto axisU = static_cast<std::size_t>(axis);
    std::vector<std::int64_t> position(rank, 0);
    std::int64_t base = 0;  // offset of the current position with the axis coordinate left out
    for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t index =
            normalizeIndex(indices[static_cast<std::size_t>(i)], dataShape[axisU], axis);
        fn(i, base + index * dataStrides[axisU]);
        for (std::size_t d = rank; d-- > 0;) {
            const std::int64_t step = d == axisU ? 0 : dataStrides[d];
            base += step;
            if (++position[d] < indexShape[d]) break;
            base -= position[d] * step;
            position[d] = 0;
        }
    }
}

// ---------------------------------------------------------------------------------------------

class GatherKernel final : public Kernel {
  public:
    explicit GatherKernel(const NodeInfo& node) : axis_(node.getInt("axis", 0)) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indexTensor = inputTensor(inputs, 1);
        require(data.rank() >= 1, "Gather: the data must have rank >= 1");
        const std::int64_t axis = normalizeAxis(axis_, data.rank());
        const AxisSplit split = splitAt(data.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;
        std::vector<std::int64_t> indices = readIndices(indexTensor, "Gather indices");
        for (auto& i : indices) i = normalizeIndex(i, dim, axis);

        Shape outShape(data.shape().begin(), data.shape().begin() + axis);
        outShape.insert(outShape.end(), indexTensor.shape().begin(), indexTensor.shape().end());
        outShape.insert(outShape.end(), data.shape().begin() + axis + 1, data.shape().end());
        Tensor out(data.dtype(), outShape);
        const auto n = static_cast<std::int64_t>(indices.size());
        dispatchBySize(data.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(data.raw());
            U* dst = static_cast<U*>(out.raw());
            ctx.pool().parallelFor(
                outer * n, static_cast<double>(inner), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t t = b; t < e; ++t) {
                        const U* src =
                            in + ((t / n) * dim + indices[static_cast<std::size_t>(t % n)]) * inner;
                        std::copy(src, src + inner, dst + t * inner);
                    }
                });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
};

class GatherElementsKernel final : public Kernel {
  public:
    explicit GatherElementsKernel(const NodeInfo& node) : axis_(node.getInt("axis", 0)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indexTensor = inputTensor(inputs, 1);
        require(data.rank() >= 1 && indexTensor.rank() == data.rank(), [&] {
            return "GatherElements: data " + shapeToString(data.shape()) + " and indices " +
                   shapeToString(indexTensor.shape()) + " must have the same rank >= 1";
        });
        const std::int64_t axis = normalizeAxis(axis_, data.rank());
        const auto indices = readIndices(indexTensor, "GatherElements indices");
        Tensor out(data.dtype(), indexTensor.shape());
        dispatchBySize(data.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(data.raw());
            U* dst = static_cast<U*>(out.raw());
            forEachIndexedElement(
                indexTensor.shape(), indices, data.shape(), axis,
                [&](std::int64_t i, std::int64_t offset) { dst[i] = in[offset]; });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
};

// GatherND and ScatterND address slices of the data by index tuples in the last dim of indices.
struct IndexTuples {
    std::int64_t batches = 1;  // product of the batch dims
    std::int64_t tuplesPerBatch = 0;
    std::int64_t sliceSize = 1;         // elements addressed by one tuple
    std::vector<std::int64_t> offsets;  // data offset of every tuple's slice, batch-major
};

IndexTuples resolveIndexTuples(const Shape& dataShape, const Tensor& indexTensor,
                               std::int64_t batchDims, const char* op) {
    const auto r = static_cast<std::int64_t>(dataShape.size());
    const std::int64_t q = indexTensor.rank();
    if (q < 1 || r < 1) fail(std::string(op) + ": data and indices must have rank >= 1");
    if (batchDims < 0 || batchDims >= std::min(q, r))
        fail(std::string(op) + ": batch_dims " + std::to_string(batchDims) +
             " must be below the ranks");
    const std::int64_t k = indexTensor.dim(q - 1);
    if (k < 1 || k > r - batchDims)
        fail(std::string(op) + ": index tuples of length " + std::to_string(k) +
             " do not fit data of shape " + shapeToString(dataShape));
    for (std::int64_t d = 0; d < batchDims; ++d)
        if (dataShape[static_cast<std::size_t>(d)] != indexTensor.dim(d))
            fail(std::string(op) + ": batch dims of data " + shapeToString(dataShape) +
                 " and indices " + shapeToString(indexTensor.shape()) + " differ");
    const auto b = static_cast<std::size_t>(batchDims), ku = static_cast<std::size_t>(k);
    IndexTuples t;
    t.batches = product(dataShape, 0, b);
    t.tuplesPerBatch = product(indexTensor.shape(), b, static_cast<std::size_t>(q - 1));
    t.sliceSize = product(dataShape, b + ku, dataShape.size());
    const std::int64_t batchStride = product(dataShape, b, dataShape.size());
    const auto strides = shapeStrides(dataShape);
    const auto indices = readIndices(indexTensor, op);
    t.offsets.resize(static_cast<std::size_t>(t.batches * t.tuplesPerBatch));
    for (std::size_t tuple = 0; tuple < t.offsets.size(); ++tuple) {
        std::int64_t offset = static_cast<std::int64_t>(tuple) /
                              std::max<std::int64_t>(t.tuplesPerBatch, 1) * batchStride;
        for (std::size_t j = 0; j < ku; ++j) {
            const std::size_t axis = b + j;
            offset += normalizeIndex(indices[tuple * ku + j], dataShape[axis],
                                     static_cast<std::int64_t>(axis)) *
                      strides[axis];
        }
        t.offsets[tuple] = offset;
    }
    return t;
}

class GatherNDKernel final : public Kernel {
  public:
    explicit GatherNDKernel(const NodeInfo& node) : batchDims_(node.getInt("batch_dims", 0)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indexTensor = inputTensor(inputs, 1);
        const IndexTuples tuples =
            resolveIndexTuples(data.shape(), indexTensor, batchDims_, "GatherND");
        Shape outShape(indexTensor.shape().begin(), indexTensor.shape().end() - 1);
        const std::int64_t k = indexTensor.dim(indexTensor.rank() - 1);
        outShape.insert(outShape.end(), data.shape().begin() + batchDims_ + k, data.shape().end());
        Tensor out(data.dtype(), outShape);
        dispatchBySize(data.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(data.raw());
            U* dst = static_cast<U*>(out.raw());
            for (std::int64_t offset : tuples.offsets)
                dst = std::copy(in + offset, in + offset + tuples.sliceSize, dst);
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t batchDims_;
};

// How scattered updates combine with the element already there.
enum class Reduction { None, Add, Mul, Max, Min };

Reduction parseReduction(const NodeInfo& node) {
    const std::string r = node.getString("reduction", "none");
    if (r == "none") return Reduction::None;
    if (r == "add") return Reduction::Add;
    if (r == "mul") return Reduction::Mul;
    if (r == "max") return Reduction::Max;
    if (r == "min") return Reduction::Min;
    fail("unsupported reduction '" + r + "'");
}

// Calls apply(dst, src) typed for the data: plain assignment by element size for `none`,
// arithmetic on the element type otherwise.
template <class F>
void withReduction(DataType type, Reduction reduction, F&& scatter) {
    if (reduction == Reduction::None) {
        dispatchBySize(type, [&]<class U>() {
            scatter.template operator()<U>([](U& d, const U& s) { d = s; });
        });
        return;
    }
    dispatchNumeric(type, [&]<class T>() {
        using A = Accumulator<T>;
        switch (reduction) {
            case Reduction::Add:
                scatter.template operator()<T>(
                    [](T& d, const T& s) { d = static_cast<T>(A(d) + A(s)); });
                break;
            case Reduction::Mul:
                scatter.template operator()<T>(
                    [](T& d, const T& s) { d = static_cast<T>(A(d) * A(s)); });
                break;
            case Reduction::Max:
                scatter.template operator()<T>(
                    [](T& d, const T& s) { d = orderedLess(d, s) ? s : d; });
                break;
            default:
                scatter.template operator()<T>(
                    [](T& d, const T& s) { d = orderedLess(s, d) ? s : d; });
                break;
        }
    });
}

// ScatterElements, and the deprecated Scatter (the same without a reduction).
class ScatterElementsKernel final : public Kernel {
  public:
    explicit ScatterElementsKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", 0)), reduction_(parseReduction(node)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indexTensor = inputTensor(inputs, 1);
        const Tensor& updates = inputTensor(inputs, 2);
        require(data.rank() >= 1 && indexTensor.rank() == data.rank(), [&] {
            return "ScatterElements: data " + shapeToString(data.shape()) + " and indices " +
                   shapeToString(indexTensor.shape()) + " must have the same rank >= 1";
        });
        require(updates.shape() == indexTensor.shape() && updates.dtype() == data.dtype(), [&] {
            return "ScatterElements: updates " + shapeToString(updates.shape()) +
                   " must match the indices' shape and the data's type";
        });
        const std::int64_t axis = normalizeAxis(axis_, data.rank());
        const auto indices = readIndices(indexTensor, "ScatterElements indices");
        Tensor out = data.clone();
        withReduction(data.dtype(), reduction_, [&]<class U>(auto apply) {
            const U* src = static_cast<const U*>(updates.raw());
            U* dst = static_cast<U*>(out.raw());
            forEachIndexedElement(
                indexTensor.shape(), indices, data.shape(), axis,
                [&](std::int64_t i, std::int64_t offset) { apply(dst[offset], src[i]); });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
    Reduction reduction_;
};

class ScatterNDKernel final : public Kernel {
  public:
    explicit ScatterNDKernel(const NodeInfo& node) : reduction_(parseReduction(node)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& data = inputTensor(inputs, 0);
        const Tensor& indexTensor = inputTensor(inputs, 1);
        const Tensor& updates = inputTensor(inputs, 2);
        const IndexTuples tuples = resolveIndexTuples(data.shape(), indexTensor, 0, "ScatterND");
        Shape expected(indexTensor.shape().begin(), indexTensor.shape().end() - 1);
        expected.insert(expected.end(),
                        data.shape().begin() + indexTensor.dim(indexTensor.rank() - 1),
                        data.shape().end());
        require(updates.shape() == expected && updates.dtype() == data.dtype(), [&] {
            return "ScatterND: updates have shape " + shapeToString(updates.shape()) +
                   ", expected " + shapeToString(expected) + " of the data's type";
        });
        Tensor out = data.clone();
        withReduction(data.dtype(), reduction_, [&]<class U>(auto apply) {
            const U* src = static_cast<const U*>(updates.raw());
            U* dst = static_cast<U*>(out.raw());
            for (std::int64_t offset : tuples.offsets)
                for (std::int64_t j = 0; j < tuples.sliceSize; ++j) apply(dst[offset + j], *src++);
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    Reduction reduction_;
};

// OneHot: indices outside [-depth, depth) give an all-off row, as the spec asks.
class OneHotKernel final : public Kernel {
  public:
    explicit OneHotKernel(const NodeInfo& node) : axis_(node.getInt("axis", -1)) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& indexTensor = inputTensor(inputs, 0);
        const Tensor& depthTensor = inputTensor(inputs, 1);
        const Tensor& values = inputTensor(inputs, 2);
        require(depthTensor.numel() == 1, "OneHot: depth must hold one element");
        require(values.numel() == 2, "OneHot: values must hold [off_value, on_value]");
        const std::int64_t depth =
            countFromFloating(std::trunc(depthTensor.valueAsDouble(0)), "OneHot: depth");
        if (depth < 1) fail("OneHot: depth must be positive, got " + std::to_string(depth));
        const std::int64_t axis = normalizeAxis(axis_, indexTensor.rank() + 1);
        Shape outShape = indexTensor.shape();
        outShape.insert(outShape.begin() + axis, depth);
        const std::int64_t outer = product(indexTensor.shape(), 0, static_cast<std::size_t>(axis));
        const std::int64_t inner = outer == 0 ? 0 : indexTensor.numel() / outer;
        const auto indices = indexTensor.toInt64Vector();
        Tensor out(values.dtype(), outShape);
        dispatchBySize(values.dtype(), [&]<class U>() {
            const U off = static_cast<const U*>(values.raw())[0];
            const U on = static_cast<const U*>(values.raw())[1];
            U* dst = static_cast<U*>(out.raw());
            std::fill_n(dst, out.numel(), off);
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i) {
                    std::int64_t v = indices[static_cast<std::size_t>(o * inner + i)];
                    if (v < 0) v += depth;
                    if (v >= 0 && v < depth) dst[(o * depth + v) * inner + i] = on;
                }
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
};

class CompressKernel final : public Kernel {
  public:
    explicit CompressKernel(const NodeInfo& node) {
        if (node.hasAttribute("axis")) axis_ = node.getInt("axis");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const Tensor& condition = inputTensor(inputs, 1);
        require(condition.rank() == 1, [&] {
            return "Compress: the condition must be 1-D, got " + shapeToString(condition.shape());
        });
        const Tensor x = axis_ ? input : input.reshaped({input.numel()});
        const std::int64_t axis = axis_ ? normalizeAxis(*axis_, x.rank()) : 0;
        const AxisSplit split = splitAt(x.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;
        std::vector<std::int64_t> selected;
        for (std::int64_t j = 0; j < condition.numel(); ++j) {
            if (condition.valueAsInt64(j) == 0) continue;
            if (j >= dim)
                fail("Compress: the condition selects index " + std::to_string(j) + " of axis " +
                     std::to_string(axis) + " of size " + std::to_string(dim));
            selected.push_back(j);
        }
        Shape outShape = x.shape();
        outShape[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(selected.size());
        Tensor out(x.dtype(), outShape);
        dispatchBySize(x.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(x.raw());
            U* dst = static_cast<U*>(out.raw());
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t j : selected) {
                    const U* src = in + (o * dim + j) * inner;
                    dst = std::copy(src, src + inner, dst);
                }
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::optional<std::int64_t> axis_;
};

// NonZero: [rank, count] coordinates in row-major order; a scalar counts as a 1-element vector.
class NonZeroKernel final : public Kernel {
  public:
    explicit NonZeroKernel(const NodeInfo&) {}
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
        std::vector<std::int64_t> positions;
        dispatchNumericOrBool(x.dtype(), [&]<class T>() {
            const T* values = x.data<T>();
            for (std::int64_t i = 0; i < x.numel(); ++i)
                if (toDouble(values[i]) != 0.0) positions.push_back(i);
        });
        const auto rank = static_cast<std::int64_t>(shape.size());
        const auto count = static_cast<std::int64_t>(positions.size());
        Tensor out(DataType::Int64, {rank, count});
        std::int64_t* coords = out.data<std::int64_t>();
        for (std::int64_t j = 0; j < count; ++j) {
            std::int64_t rest = positions[static_cast<std::size_t>(j)];
            for (std::int64_t d = rank; d-- > 0;) {
                coords[d * count + j] = rest % shape[static_cast<std::size_t>(d)];
                rest /= shape[static_cast<std::size_t>(d)];
            }
        }
        outputs[0] = Value(std::move(out));
    }
};

// Unique over elements (no axis: the flattened input) or over slices along an axis. Slices are
// ordered lexicographically; `sorted = 0` keeps the order of first occurrence.
class UniqueKernel final : public Kernel {
  public:
    explicit UniqueKernel(const NodeInfo& node) : sorted_(node.getInt("sorted", 1) != 0) {
        if (node.hasAttribute("axis")) axis_ = node.getInt("axis");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        const Tensor x = axis_ ? input : input.reshaped({input.numel()});
        const std::int64_t axis = axis_ ? normalizeAxis(*axis_, x.rank()) : 0;
        const AxisSplit split = splitAt(x.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;

        // Slice s consists of elements (o, s, i) for every outer o and inner i.
        std::vector<std::int64_t> order(static_cast<std::size_t>(dim));
        std::iota(order.begin(), order.end(), 0);
        std::vector<std::int64_t> groupOf(static_cast<std::size_t>(dim));  // slice -> group
        std::vector<std::int64_t> firstOf;                                 // group -> first slice
        std::vector<std::int64_t> counts;
        dispatchOrdered(x.dtype(), [&]<class T>() {
            const T* v = x.data<T>();
            // -1, 0, 1 as slice a orders before, equal to, after slice b.
            auto compare = [&](std::int64_t a, std::int64_t b) {
                for (std::int64_t o = 0; o < outer; ++o)
                    for (std::int64_t i = 0; i < inner; ++i) {
                        const T& ea = v[(o * dim + a) * inner + i];
                        const T& eb = v[(o * dim + b) * inner + i];
                        if (orderedLess(ea, eb)) return -1;
                        if (orderedLess(eb, ea)) return 1;
                    }
                return 0;
            };
            std::stable_sort(order.begin(), order.end(),
                             [&](std::int64_t a, std::int64_t b) { return compare(a, b) < 0; });
            for (std::size_t k = 0; k < order.size(); ++k) {
                if (k == 0 || compare(order[k - 1], order[k]) != 0) {
                    firstOf.push_back(order[k]);
                    counts.push_back(0);
                }
                groupOf[static_cast<std::size_t>(order[k])] =
                    static_cast<std::int64_t>(firstOf.size() - 1);
                ++counts.back();
            }
        });
        const auto groups = static_cast<std::int64_t>(firstOf.size());
        // Output position of every group: sorted order, or order of first occurrence.
        std::vector<std::int64_t> rank(static_cast<std::size_t>(groups));
        std::iota(rank.begin(), rank.end(), 0);
        if (!sorted_) {
            std::vector<std::int64_t> byFirst(rank);
            std::sort(byFirst.begin(), byFirst.end(), [&](std::int64_t a, std::int64_t b) {
                return firstOf[static_cast<std::size_t>(a)] < firstOf[static_cast<std::size_t>(b)];
            });
            for (std::int64_t p = 0; p < groups; ++p)
                rank[static_cast<std::size_t>(byFirst[static_cast<std::size_t>(p)])] = p;
        }

        Shape yShape = x.shape();
        yShape[static_cast<std::size_t>(axis)] = groups;
        Tensor y(x.dtype(), yShape);
        Tensor indices(DataType::Int64, {groups});
        Tensor inverse(DataType::Int64, {dim});
        Tensor countTensor(DataType::Int64, {groups});
        for (std::int64_t g = 0; g < groups; ++g) {
            const auto r = rank[static_cast<std::size_t>(g)];
            indices.data<std::int64_t>()[r] = firstOf[static_cast<std::size_t>(g)];
            countTensor.data<std::int64_t>()[r] = counts[static_cast<std::size_t>(g)];
        }
        for (std::int64_t s = 0; s < dim; ++s)
            inverse.data<std::int64_t>()[s] =
                rank[static_cast<std::size_t>(groupOf[static_cast<std::size_t>(s)])];
        const std::int64_t* firstByRank = indices.data<std::int64_t>();
        dispatchBySize(x.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(x.raw());
            U* dst = static_cast<U*>(y.raw());
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t r = 0; r < groups; ++r) {
                    const U* src = in + (o * dim + firstByRank[r]) * inner;
                    dst = std::copy(src, src + inner, dst);
                }
        });
        outputs[0] = Value(std::move(y));
        if (outputs.size() > 1) outputs[1] = Value(std::move(indices));
        if (outputs.size() > 2) outputs[2] = Value(std::move(inverse));
        if (outputs.size() > 3) outputs[3] = Value(std::move(countTensor));
    }

  private:
    bool sorted_;
    std::optional<std::int64_t> axis_;
};

// TopK: ties go to the lower index; the result is always sorted (allowed when sorted = 0).
class TopKKernel final : public Kernel {
  public:
    explicit TopKKernel(const NodeInfo& node)
        : kFromAttribute_(node.opsetVersion() < 10),
          k_(kFromAttribute_ ? node.getInt("k") : 0),
          axis_(node.getInt("axis", -1)),
          largest_(node.getInt("largest", 1) != 0) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() >= 1, "TopK: the input must have rank >= 1");
        const std::int64_t axis = normalizeAxis(axis_, x.rank());
        std::int64_t k = k_;
        if (!kFromAttribute_) {
            const Tensor& kTensor = inputTensor(inputs, 1);
            require(kTensor.numel() == 1, "TopK: K must hold one element");
            k = kTensor.valueAsInt64(0);
        }
        const AxisSplit split = splitAt(x.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;
        if (k < 0 || k > dim)
            fail("TopK: k = " + std::to_string(k) + " is outside [0, " + std::to_string(dim) +
                 "] for axis " + std::to_string(axis));
        Shape outShape = x.shape();
        outShape[static_cast<std::size_t>(axis)] = k;
        Tensor values(x.dtype(), outShape);
        Tensor indices(DataType::Int64, outShape);
        dispatchNumeric(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* outValues = values.data<T>();
            std::int64_t* outIndices = indices.data<std::int64_t>();
            ctx.pool().parallelFor(
                outer * inner, static_cast<double>(dim) * 4, [&](std::int64_t b, std::int64_t e) {
                    std::vector<T> line(static_cast<std::size_t>(dim));
                    std::vector<std::int64_t> order(static_cast<std::size_t>(dim));
                    for (std::int64_t l = b; l < e; ++l) {
                        const std::int64_t o = l / inner, i = l % inner;
                        for (std::int64_t j = 0; j < dim; ++j)
                            line[static_cast<std::size_t>(j)] = in[(o * dim + j) * inner + i];
                        std::iota(order.begin(), order.end(), 0);
                        auto before = [&](std::int64_t a, std::int64_t c) {
                            const T& va = line[static_cast<std::size_t>(a)];
                            const T& vc = line[static_cast<std::size_t>(c)];
                            if (largest_ ? orderedLess(vc, va) : orderedLess(va, vc)) return true;
                            if (largest_ ? orderedLess(va, vc) : orderedLess(vc, va)) return false;
                            return a < c;
                        };
                        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                        for (std::int64_t j = 0; j < k; ++j) {
                            const std::int64_t dst = (o * k + j) * inner + i;
                            outIndices[dst] = order[static_cast<std::size_t>(j)];
                            outValues[dst] =
                                line[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(values));
        if (outputs.size() > 1) outputs[1] = Value(std::move(indices));
    }

  private:
    bool kFromAttribute_;
    std::int64_t k_;
    std::int64_t axis_;
    bool largest_;
};

// ArgMax (Largest = true) and ArgMin; NaN counts as the largest value.
template <bool Largest>
class ArgExtremeKernel final : public Kernel {
  public:
    explicit ArgExtremeKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", 0)),
          keepDims_(node.getInt("keepdims", 1) != 0),
          selectLast_(node.getInt("select_last_index", 0) != 0) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() >= 1, "the input must have rank >= 1");
        const std::int64_t axis = normalizeAxis(axis_, x.rank());
        const AxisSplit split = splitAt(x.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;
        if (dim == 0 && outer * inner > 0) fail("axis " + std::to_string(axis) + " is empty");
        Shape outShape = x.shape();
        if (keepDims_)
            outShape[static_cast<std::size_t>(axis)] = 1;
        else
            outShape.erase(outShape.begin() + axis);
        Tensor out(DataType::Int64, outShape);
        std::int64_t* dst = out.data<std::int64_t>();
        dispatchNumericOrBool(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            ctx.pool().parallelFor(
                outer * inner, static_cast<double>(dim), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t l = b; l < e; ++l) {
                        const T* line = in + (l / inner) * dim * inner + l % inner;
                        std::int64_t best = 0;
                        for (std::int64_t j = 1; j < dim; ++j) {
                            const T& v = line[j * inner];
                            const T& current = line[best * inner];
                            const bool better =
                                Largest ? orderedLess(current, v) : orderedLess(v, current);
                            const bool tie = !orderedLess(current, v) && !orderedLess(v, current);
                            if (better || (selectLast_ && tie)) best = j;
                        }
                        dst[l] = best;
                    }
                });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t axis_;
    bool keepDims_;
    bool selectLast_;
};

class CumSumKernel final : public Kernel {
  public:
    explicit CumSumKernel(const NodeInfo& node)
        : exclusive_(node.getInt("exclusive", 0) != 0), reverse_(node.getInt("reverse", 0) != 0) {}
    void run(KernelContext& ctx, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        const Tensor& axisTensor = inputTensor(inputs, 1);
        require(axisTensor.numel() == 1, "CumSum: axis must hold one element");
        require(x.rank() >= 1, "CumSum: the input must have rank >= 1");
        const std::int64_t axis = normalizeAxis(axisTensor.valueAsInt64(0), x.rank());
        const AxisSplit split = splitAt(x.shape(), axis);
        const std::int64_t outer = split.outer, dim = split.dim, inner = split.inner;
        Tensor out(x.dtype(), x.shape());
        dispatchNumeric(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* dst = out.data<T>();
            ctx.pool().parallelFor(
                outer * inner, static_cast<double>(dim), [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t l = b; l < e; ++l) {
                        const std::int64_t base = (l / inner) * dim * inner + l % inner;
                        Accumulator<T> sum{};
                        for (std::int64_t step = 0; step < dim; ++step) {
                            const std::int64_t j = reverse_ ? dim - 1 - step : step;
                            const std::int64_t at = base + j * inner;
                            if (exclusive_) {
                                dst[at] = static_cast<T>(sum);
                                sum = static_cast<Accumulator<T>>(
                                    sum + static_cast<Accumulator<T>>(in[at]));
                            } else {
                                sum = static_cast<Accumulator<T>>(
                                    sum + static_cast<Accumulator<T>>(in[at]));
                                dst[at] = static_cast<T>(sum);
                            }
                        }
                    }
                });
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    bool exclusive_;
    bool reverse_;
};

// ReverseSequence reverses the first sequence_lens[b] steps of every batch entry.
class ReverseSequenceKernel final : public Kernel {
  public:
    explicit ReverseSequenceKernel(const NodeInfo& node)
        : batchAxis_(node.getInt("batch_axis", 1)), timeAxis_(node.getInt("time_axis", 0)) {
        if ((batchAxis_ != 0 && batchAxis_ != 1) || (timeAxis_ != 0 && timeAxis_ != 1) ||
            batchAxis_ == timeAxis_)
            fail("ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order");
    }
    void run(KernelContext&, const Inputs& inputs, Outputs& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(x.rank() >= 2, "ReverseSequence: the input must have rank >= 2");
        const auto lengths = inputTensor(inputs, 1).toInt64Vector();
        const std::int64_t batch = x.dim(batchAxis_), steps = x.dim(timeAxis_);
        if (static_cast<std::int64_t>(lengths.size()) != batch)
            fail("ReverseSequence: " + std::to_string(lengths.size()) +
                 " sequence lengths for a batch of " + std::to_string(batch));
        const std::int64_t inner = product(x.shape(), 2, x.shape().size());
        const std::int64_t batchStride = (batchAxis_ == 0 ? steps : 1) * inner;
        const std::int64_t stepStride = (timeAxis_ == 0 ? batch : 1) * inner;
        Tensor out = x.clone();
        dispatchBySize(x.dtype(), [&]<class U>() {
            const U* in = static_cast<const U*>(x.raw());
            U* dst = static_cast<U*>(out.raw());
            for (std::int64_t b = 0; b < batch; ++b) {
                const std::int64_t length = lengths[static_cast<std::size_t>(b)];
                if (length < 0 || length > steps)
                    fail("ReverseSequence: sequence length " + std::to_string(length) +
                         " of batch entry " + std::to_string(b) + " is outside [0, " +
                         std::to_string(steps) + "]");
                for (std::int64_t t = 0; t < length; ++t) {
                    const U* src = in + b * batchStride + (length - 1 - t) * stepStride;
                    std::copy(src, src + inner, dst + b * batchStride + t * stepStride);
                }
            }
        });
        outputs[0] = Value(std::move(out));
    }

  private:
    std::int64_t batchAxis_, timeAxis_;
};

// TensorScatter-24: a copy of past_cache with `update` written along `axis` (the sequence axis,
// never the batch axis 0) from write_indices[batch] on (0 without that input); "circular" wraps
// the write position modulo the cache length, "linear" must fit.
class TensorScatterKernel : public Kernel {
  public:
    explicit TensorScatterKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", -2)),
          circular_(node.getString("mode", "linear") == "circular") {
        const std::string mode = node.getString("mode", "linear");
        require(mode == "linear" || mode == "circular", [&] {
            return "TensorScatter: mode must be linear or circular, got '" + mode + "'";
        });
    }

    void run(KernelContext&, const std::vector<const Value*>& inputs, Outputs& outputs) override {
        const Tensor& past = inputTensor(inputs, 0);
        const Tensor& update = inputTensor(inputs, 1);
        const Tensor* writeIndices = optionalInputTensor(inputs, 2);
        require(past.dtype() == update.dtype(),
                "TensorScatter: past_cache and update types differ");
        require(past.rank() >= 2 && past.rank() == update.rank(), [&] {
            return "TensorScatter: past_cache " + shapeToString(past.shape()) + " and update " +
                   shapeToString(update.shape()) + " must have the same rank >= 2";
        });
        const std::int64_t axis = normalizeAxis(axis_, past.rank());
        require(axis != 0, "TensorScatter: axis must not be the batch axis 0");
        for (std::int64_t d = 0; d < past.rank(); ++d)
            require(d == axis || past.dim(d) == update.dim(d), [&] {
                return "TensorScatter: update " + shapeToString(update.shape()) +
                       " differs from past_cache " + shapeToString(past.shape()) +
                       " outside axis " + std::to_string(axis);
            });
        const AxisSplit cache = splitAt(past.shape(), axis);
        const std::int64_t length = update.dim(axis);
        require(length <= cache.dim, [&] {
            return "TensorScatter: update has " + std::to_string(length) + " positions on axis " +
                   std::to_string(axis) + ", more than the cache's " + std::to_string(cache.dim);
        });
        const std::int64_t batch = past.dim(0);
        std::vector<std::int64_t> starts(static_cast<std::size_t>(batch), 0);
        if (writeIndices && writeIndices->numel() > 0) {
            require(writeIndices->rank() == 1 && writeIndices->dim(0) == batch, [&] {
                return "TensorScatter: write_indices " + shapeToString(writeIndices->shape()) +
                       " must hold one index per batch entry (" + std::to_string(batch) + ")";
            });
            starts = writeIndices->toInt64Vector();
        }
        for (std::int64_t b = 0; b < batch; ++b) {
            const std::int64_t start = starts[static_cast<std::size_t>(b)];
            require(start >= 0 && (circular_ ? start < cache.dim || cache.dim == 0
                                             : start <= cache.dim - length),
                    [&] {
                        return "TensorScatter: write index " + std::to_string(start) +
                               " of batch entry " + std::to_string(b) + " does not fit " +
                               std::to_string(length) + " positions into a cache of " +
                               std::to_string(cache.dim);
                    });
        }
        Tensor present = past.clone();
        const std::int64_t perBatch = batch ? cache.outer / batch : 0;  // prefixes per entry
        for (std::int64_t o = 0; o < cache.outer; ++o) {
            const std::int64_t start =
                starts[static_cast<std::size_t>(perBatch ? o / perBatch : 0)];
            for (std::int64_t i = 0; i < length; ++i) {
                const std::int64_t position = circular_ ? (start + i) % cache.dim : start + i;
                copyElements(update, (o * length + i) * cache.inner, present,
                             (o * cache.dim + position) * cache.inner, cache.inner);
            }
        }
        outputs[0] = Value(std::move(present));
    }

  private:
    std::int64_t axis_;
    bool circular_;
};

}  // namespace

void registerIndexingOps(KernelRegistry& registry) {
    registry.add<GatherKernel>("Gather");
    registry.add<GatherElementsKernel>("GatherElements", 11);
    registry.add<GatherNDKernel>("GatherND", 11);
    registry.add<ScatterElementsKernel>("Scatter", 9);
    registry.add<ScatterElementsKernel>("ScatterElements", 11);
    registry.add<ScatterNDKernel>("ScatterND", 11);
    registry.add<OneHotKernel>("OneHot", 9);
    registry.add<CompressKernel>("Compress", 9);
    registry.add<NonZeroKernel>("NonZero", 9);
    registry.add<UniqueKernel>("Unique", 11);
    registry.add<TopKKernel>("TopK");
    registry.add<ArgExtremeKernel<true>>("ArgMax");
    registry.add<ArgExtremeKernel<false>>("ArgMin");
    registry.add<CumSumKernel>("CumSum", 11);
    registry.add<ReverseSequenceKernel>("ReverseSequence", 10);
    registry.add<TensorScatterKernel>("TensorScatter", 24);
}

}  // namespace onnxlens::engine::ops
