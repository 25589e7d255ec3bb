// The com.microsoft normalizations ONNX Runtime's transformer optimizer writes:
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization and GroupNorm
// (the diffusion models' NHWC group normalization). Semantics: ONNX Runtime's
// docs/ContribOperators.md, and its CPU kernels where that is silent.
//
// A row (one token's hidden vector) is summed and normalized in float (double for double
// tensors; float16/bfloat16 rows are converted once into a float scratch row), the statistics
// accumulated in double, every pass over the row an Eigen array expression (vectorised), the
// rows split over the thread pool. LayerNormalization and SimplifiedLayerNormalization of the
// default domain (ONNX Runtime's contrib schemas) live with their ONNX twins in
// NormalizationOps.cpp.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "MsKernelSupport.h"
#include "OpFamilies.h"
#include "ReduceNumeric.h"
#include "SubnormalFreeMath.h"

namespace onnxlens::engine::ops {
namespace {

using namespace ms;

// A 1-D parameter of `length` elements (gamma, beta, bias), any floating type, in type C.
template <class C>
std::vector<C> vectorParameter(const Tensor& t, std::int64_t length, const std::string& op,
                               const char* name) {
    requireFloatTensor(t, op, name);
    require(t.rank() == 1 && t.dim(0) == length, [&] {
        return op + ": " + name + " must have shape [" + std::to_string(length) + "], got " +
               shapeToString(t.shape());
    });
    std::vector<C> values(static_cast<std::size_t>(length));
    dispatchFloat(t.dtype(), [&]<class P>() {
        const P* p = t.data<P>();
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<C>(toAccumulator<double>(p[i]));
    });
    return values;
}

float epsilonAttribute(const NodeInfo& node, float fallback) {
    const float epsilon = node.getFloat("epsilon", fallback);
    // As ONNX Runtime's kernels: a negative (or NaN) epsilon is refused.
    require(epsilon >= 0.0f, [&] {
        return node.opType() + ": attribute epsilon must be >= 0, got " + std::to_string(epsilon);
    });
    return epsilon;
}

// Mean and inverse standard deviation (the RMS form: mean 0 and the root mean square) of one
// row, accumulated in double.
template <class C>
std::pair<double, double> rowStatistics(const C* s, std::int64_t h, double epsilon, bool rms) {
    if (h == 0) return {0.0, 1.0 / std::sqrt(epsilon)};
    if constexpr (std::is_same_v<C, float>) {  // eight running sums (ReduceNumeric.h)
        const auto [mean, meanSquare] = floatMoments(s, h, !rms);
        return {mean, 1.0 / std::sqrt(meanSquare + epsilon)};
    }
    const auto values = ConstRowMap<C>(s, h).template cast<double>();
    const double count = static_cast<double>(h);
    const double mean = rms ? 0.0 : values.sum() / count;
    const double meanSquare =
        rms ? values.square().sum() / count : (values - mean).square().sum() / count;
    return {mean, 1.0 / std::sqrt(meanSquare + epsilon)};
}

// out = (s - mean) * invStd * gamma [+ beta]; `out` may be `s`.
template <class C>
void normalizeRow(const C* s, C* out, std::int64_t h, std::pair<double, double> stats,
                  const C* gamma, const C* beta) {
    const C mean = static_cast<C>(stats.first), inv = static_cast<C>(stats.second);
    const ConstRowMap<C> in(s, h), g(gamma, h);
    RowMap<C> y(out, h);
    if (beta)
        y = (in - mean) * inv * g + ConstRowMap<C>(beta, h);
    else
        y = (in - mean) * inv * g;
}

// Element-type conversions of whole rows (vectorised by Eigen).
template <class From, class To>
void convertRow(const From* in, To* out, std::int64_t n) {
    RowMap<To>(out, n) = ConstRowMap<From>(in, n).template cast<To>();
}

// Normalizes the summed row `s` (type C) into the output row `out` (type T): in place and
// converted when T is not C. Returns the row's mean and inverse standard deviation.
template <class T, class C>
std::pair<double, double> normalizeInto(C* s, T* out, std::int64_t h, double epsilon, bool rms,
                                        const C* gamma, const C* beta) {
    const auto stats = rowStatistics(s, h, epsilon, rms);
    if constexpr (std::is_same_v<T, C>) {
        normalizeRow(s, out, h, stats, gamma, beta);
    } else {
        normalizeRow(s, s, h, stats, gamma, beta);
        convertRow(s, out, h);
    }
    return stats;
}

// The shape of a per-row statistic: the input's shape with its last dimension 1.
Shape rowStatisticShape(const Shape& shape) {
    Shape s = shape;
    if (!s.empty()) s.back() = 1;
    return s;
}

// ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization -------------------------------
// output = LayerNorm(input + skip [+ bias]) * gamma [+ beta] over the last axis (the RMS form
// for the simplified operator: no mean, no beta). input is [batch, sequence, hidden] or
// [tokens, hidden]; skip has input's shape, or [1, sequence, hidden] / [sequence, hidden] when
// input is 3-D (one skip shared by every batch entry). Optional outputs: mean and inv_std_var
// (float, the input's shape with hidden 1; the simplified operator's mean is 0, as ONNX Runtime
// writes it) and input_skip_bias_sum.
template <bool kRms>
class SkipLayerNormKernel final : public Kernel {
  public:
    explicit SkipLayerNormKernel(const NodeInfo& node)
        : op_(node.opType()),
          epsilon_(epsilonAttribute(node, 1e-12f)),
          wantMean_(node.hasOutput(1)),
          wantInvStd_(node.hasOutput(2)),
          wantSum_(node.hasOutput(3)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = requiredInput(inputs, 0, op_, "input");
        const Tensor& skip = requiredInput(inputs, 1, op_, "skip");
        const Tensor& gamma = requiredInput(inputs, 2, op_, "gamma");
        const Tensor* beta = kRms ? nullptr : optionalInputTensor(inputs, 3);
        const Tensor* bias = optionalInputTensor(inputs, kRms ? 3 : 4);
        requireFloatTensor(x, op_, "input");
        require(skip.dtype() == x.dtype(), [&] {
            return op_ + ": skip must have input's type " + dataTypeName(x.dtype()) + ", got " +
                   dataTypeName(skip.dtype());
        });
        require(x.rank() == 2 || x.rank() == 3, [&] {
            return op_ +
                   ": input must be 3-D [batch, sequence, hidden] or 2-D [tokens, hidden], got " +
                   shapeToString(x.shape());
        });
        const std::int64_t h = x.shape().back();
        const std::int64_t rows =
            shapeElementCount(std::span(x.shape()).first(x.shape().size() - 1));
        const std::int64_t skipRows = skipRowCount(x.shape(), skip.shape());

        Tensor y(x.dtype(), x.shape());
        Tensor sum = wantSum_ ? Tensor(x.dtype(), x.shape()) : Tensor();
        const Shape statShape = rowStatisticShape(x.shape());
        Tensor mean = wantMean_ ? Tensor(DataType::Float, statShape) : Tensor();
        Tensor invStd = wantInvStd_ ? Tensor(DataType::Float, statShape) : Tensor();
        float* meanOut = wantMean_ ? mean.data<float>() : nullptr;
        float* invStdOut = wantInvStd_ ? invStd.data<float>() : nullptr;

        dispatchFloat(x.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const std::vector<C> g = vectorParameter<C>(gamma, h, op_, "gamma");
            const std::vector<C> b =
                beta ? vectorParameter<C>(*beta, h, op_, "beta") : std::vector<C>();
            const std::vector<C> bi =
                bias ? vectorParameter<C>(*bias, h, op_, "bias") : std::vector<C>();
            const T* in = x.data<T>();
            const T* sk = skip.data<T>();
            T* out = y.data<T>();
            T* sumOut = wantSum_ ? sum.data<T>() : nullptr;
            ctx.pool().parallelFor(
                rows, static_cast<double>(h) * 8, [&](std::int64_t begin, std::int64_t end) {
                    std::vector<C> scratch(std::is_same_v<T, C> ? 0 : static_cast<std::size_t>(h));
                    for (std::int64_t r = begin; r < end; ++r) {
                        const T* xr = in + r * h;
                        const T* sr = sk + (r % skipRows) * h;
                        C* s;
                        if constexpr (std::is_same_v<T, C>) {
                            s = sumOut ? sumOut + r * h : out + r * h;
                            RowMap<C>(s, h) = ConstRowMap<C>(xr, h) + ConstRowMap<C>(sr, h);
                        } else {
                            s = scratch.data();
                            RowMap<C>(s, h) = ConstRowMap<T>(xr, h).template cast<C>() +
                                              ConstRowMap<T>(sr, h).template cast<C>();
                        }
                        if (!bi.empty()) RowMap<C>(s, h) += ConstRowMap<C>(bi.data(), h);
                        if constexpr (!std::is_same_v<T, C>) {
                            if (sumOut) convertRow(s, sumOut + r * h, h);
                        }
                        const auto stats = normalizeInto(s, out + r * h, h, epsilon_, kRms,
                                                         g.data(), b.empty() ? nullptr : b.data());
                        if (meanOut) meanOut[r] = static_cast<float>(stats.first);
                        if (invStdOut) invStdOut[r] = static_cast<float>(stats.second);
                    }
                });
        });
        outputs[0] = Value(std::move(y));
        if (wantMean_ && outputs.size() > 1) outputs[1] = Value(std::move(mean));
        if (wantInvStd_ && outputs.size() > 2) outputs[2] = Value(std::move(invStd));
        if (wantSum_ && outputs.size() > 3) outputs[3] = Value(std::move(sum));
    }

  private:
    // Rows of skip, which repeat over input's rows (input's row r reads skip's row r % count).
    std::int64_t skipRowCount(const Shape& x, const Shape& skip) const {
        if (skip == x) return shapeElementCount(std::span(x).first(x.size() - 1));
        const bool shared = x.size() == 3 && !skip.empty() && skip.back() == x[2] &&
                            ((skip.size() == 2 && skip[0] == x[1]) ||
                             (skip.size() == 3 && skip[0] == 1 && skip[1] == x[1]));
        require(shared, [&] {
            return op_ + ": skip of shape " + shapeToString(skip) +
                   " does not fit input of shape " + shapeToString(x) +
                   " (it must have input's shape, or [1, sequence, hidden] or [sequence, "
                   "hidden] for a 3-D input)";
        });
        return x[1];
    }

    std::string op_;
    double epsilon_;
    bool wantMean_, wantInvStd_, wantSum_;
};

// ---- EmbedLayerNormalization -----------------------------------------------------------------
// output[b, s] = LayerNorm(word_embedding[input_ids[b, s]] + position_embedding[p] +
// segment_embedding[segment_ids[b, s]]) * gamma + beta, p = position_ids[b or 0, s] when given,
// else s (segment_ids taken as 0 when only the table is given). mask_index[b] counts the entries of
// mask[b] equal to 1 (0 without a mask, as ONNX Runtime writes it); embedding_sum is the sum before
// normalization. Ids out of their table are errors.
class EmbedLayerNormKernel final : public Kernel {
  public:
    explicit EmbedLayerNormKernel(const NodeInfo& node)
        : op_(node.opType()),
          epsilon_(epsilonAttribute(node, 1e-12f)),
          wantSum_(node.hasOutput(2)) {
        // mask_index_type only describes mask_index for shape inference; ONNX Runtime's kernel
        // writes the 1-D mask_index whatever it says.
        const std::int64_t maskIndexType = node.getInt("mask_index_type", 1);
        require(maskIndexType == 0 || maskIndexType == 1, [&] {
            return op_ + ": attribute mask_index_type must be 0 or 1, got " +
                   std::to_string(maskIndexType);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& ids = requiredInput(inputs, 0, op_, "input_ids");
        const Tensor* segmentIds = optionalInputTensor(inputs, 1);
        const Tensor& word = requiredInput(inputs, 2, op_, "word_embedding");
        const Tensor& position = requiredInput(inputs, 3, op_, "position_embedding");
        const Tensor* segment = optionalInputTensor(inputs, 4);
        const Tensor& gamma = requiredInput(inputs, 5, op_, "gamma");
        const Tensor& beta = requiredInput(inputs, 6, op_, "beta");
        const Tensor* mask = optionalInputTensor(inputs, 7);
        const Tensor* positionIds = optionalInputTensor(inputs, 8);

        require(ids.rank() == 2, [&] {
            return op_ + ": input_ids must be 2-D [batch, sequence], got " +
                   shapeToString(ids.shape());
        });
        const std::int64_t batch = ids.dim(0), sequence = ids.dim(1);
        requireFloatTensor(word, op_, "word_embedding");
        require(word.rank() == 2, [&] {
            return op_ + ": word_embedding must be 2-D [vocabulary, hidden], got " +
                   shapeToString(word.shape());
        });
        const std::int64_t h = word.dim(1);
        checkTable(position, word, "position_embedding");
        require(!segmentIds || segment,
                [&] { return op_ + ": segment_ids is given without segment_embedding (input 4)"; });
        if (segment) checkTable(*segment, word, "segment_embedding");
        // A table without ids adds its row 0 to every token (as ONNX Runtime's kernel does).
        if (segment && !segmentIds)
            require(segment->dim(0) > 0, [&] { return op_ + ": segment_embedding has no rows"; });

        const std::vector<std::int64_t> wordRows =
            tableRows(ids, ids.shape(), word.dim(0), "input_ids", "word_embedding");
        const std::vector<std::int64_t> segmentRows =
            segmentIds ? tableRows(*segmentIds, ids.shape(), segment->dim(0), "segment_ids",
                                   "segment_embedding")
                       : std::vector<std::int64_t>(static_cast<std::size_t>(ids.numel()), 0);
        std::vector<std::int64_t> positionRows;
        if (positionIds) {
            require(positionIds->rank() == 2 && positionIds->dim(1) == sequence &&
                        (positionIds->dim(0) == batch || positionIds->dim(0) == 1),
                    [&] {
                        return op_ + ": position_ids must be [" + std::to_string(batch) + ", " +
                               std::to_string(sequence) + "] or [1, " + std::to_string(sequence) +
                               "], got " + shapeToString(positionIds->shape());
                    });
            positionRows = tableRows(*positionIds, positionIds->shape(), position.dim(0),
                                     "position_ids", "position_embedding");
        } else {
            require(sequence <= position.dim(0), [&] {
                return op_ + ": sequence length " + std::to_string(sequence) +
                       " exceeds position_embedding's " + std::to_string(position.dim(0)) + " rows";
            });
        }
        const std::int64_t positionStride =
            positionIds && positionIds->dim(0) == batch ? sequence : 0;

        std::vector<std::int64_t> maskValues;
        if (mask) {
            require(mask->shape() == ids.shape(), [&] {
                return op_ + ": mask must have input_ids' shape " + shapeToString(ids.shape()) +
                       ", got " + shapeToString(mask->shape());
            });
            maskValues = integerValues(*mask, "mask");
        }

        const Shape outShape{batch, sequence, h};
        Tensor y(word.dtype(), outShape);
        Tensor sum = wantSum_ ? Tensor(word.dtype(), outShape) : Tensor();
        const std::int64_t rows = batch * sequence;
        dispatchFloat(word.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const std::vector<C> g = vectorParameter<C>(gamma, h, op_, "gamma");
            const std::vector<C> b = vectorParameter<C>(beta, h, op_, "beta");
            const T* w = word.data<T>();
            const T* p = position.data<T>();
            const T* sg = segment ? segment->data<T>() : nullptr;
            T* out = y.data<T>();
            T* sumOut = wantSum_ ? sum.data<T>() : nullptr;
            ctx.pool().parallelFor(
                rows, static_cast<double>(h) * 8, [&](std::int64_t begin, std::int64_t end) {
                    std::vector<C> scratch(std::is_same_v<T, C> ? 0 : static_cast<std::size_t>(h));
                    for (std::int64_t r = begin; r < end; ++r) {
                        const auto k = static_cast<std::size_t>(r);
                        const std::int64_t s = r % sequence;
                        const std::int64_t pos = positionIds
                                                     ? positionRows[static_cast<std::size_t>(
                                                           (r / sequence) * positionStride + s)]
                                                     : s;
                        const T* wr = w + wordRows[k] * h;
                        const T* pr = p + pos * h;
                        C* e;
                        if constexpr (std::is_same_v<T, C>) {
                            e = sumOut ? sumOut + r * h : out + r * h;
                            RowMap<C>(e, h) = ConstRowMap<C>(wr, h) + ConstRowMap<C>(pr, h);
                            if (sg) RowMap<C>(e, h) += ConstRowMap<C>(sg + segmentRows[k] * h, h);
                        } else {
                            e = scratch.data();
                            RowMap<C>(e, h) = ConstRowMap<T>(wr, h).template cast<C>() +
                                              ConstRowMap<T>(pr, h).template cast<C>();
                            if (sg)
                                RowMap<C>(e, h) +=
                                    ConstRowMap<T>(sg + segmentRows[k] * h, h).template cast<C>();
                            if (sumOut) convertRow(e, sumOut + r * h, h);
                        }
                        normalizeInto(e, out + r * h, h, epsilon_, false, g.data(), b.data());
                    }
                });
        });

        Tensor maskIndex = Tensor::zeros(DataType::Int32, {batch});
        std::int32_t* count = maskIndex.data<std::int32_t>();
        for (std::size_t i = 0; i < maskValues.size(); ++i)
            count[static_cast<std::int64_t>(i) / sequence] += maskValues[i] == 1 ? 1 : 0;
        outputs[0] = Value(std::move(y));
        if (outputs.size() > 1) outputs[1] = Value(std::move(maskIndex));
        if (wantSum_ && outputs.size() > 2) outputs[2] = Value(std::move(sum));
    }

  private:
    void checkTable(const Tensor& table, const Tensor& word, const char* name) const {
        require(table.dtype() == word.dtype(), [&] {
            return op_ + ": " + name + " must have word_embedding's type " +
                   dataTypeName(word.dtype()) + ", got " + dataTypeName(table.dtype());
        });
        require(table.rank() == 2 && table.dim(1) == word.dim(1), [&] {
            return op_ + ": " + name + " must be 2-D [rows, " + std::to_string(word.dim(1)) +
                   "], got " + shapeToString(table.shape());
        });
    }

    std::vector<std::int64_t> integerValues(const Tensor& t, const char* name) const {
        require(t.dtype() == DataType::Int32 || t.dtype() == DataType::Int64, [&] {
            return op_ + ": " + name + " must be an int32 (or int64) tensor, got " +
                   dataTypeName(t.dtype());
        });
        std::vector<std::int64_t> values(static_cast<std::size_t>(t.numel()));
        if (t.dtype() == DataType::Int32)
            std::copy_n(t.data<std::int32_t>(), values.size(), values.begin());
        else
            std::copy_n(t.data<std::int64_t>(), values.size(), values.begin());
        return values;
    }

    // The ids of `t` (of shape `shape`), each checked to be a row of a table of `rows` rows.
    std::vector<std::int64_t> tableRows(const Tensor& t, const Shape& shape, std::int64_t rows,
                                        const char* name, const char* table) const {
        require(t.shape() == shape, [&] {
            return op_ + ": " + name + " must have shape " + shapeToString(shape) + ", got " +
                   shapeToString(t.shape());
        });
        std::vector<std::int64_t> values = integerValues(t, name);
        for (std::size_t i = 0; i < values.size(); ++i)
            require(values[i] >= 0 && values[i] < rows, [&] {
                return op_ + ": " + name + " value " + std::to_string(values[i]) + " (element " +
                       std::to_string(i) + ") is outside " + table + "'s " + std::to_string(rows) +
                       " rows";
            });
        return values;
    }

    std::string op_;
    double epsilon_;
    bool wantSum_;
};

// ---- GroupNorm -------------------------------------------------------------------------------
// The channels of X (NHWC when channels_last is 1, the default; NCHW when 0) split into `groups`
// groups; each (sample, group) is normalized over its channels and pixels, then
// y = gamma[c] * normalized + beta[c], then SiLU when activation is 1.
class GroupNormKernel final : public Kernel {
  public:
    explicit GroupNormKernel(const NodeInfo& node)
        : op_(node.opType()),
          epsilon_(epsilonAttribute(node, 1e-5f)),
          groups_(node.getInt("groups")),
          silu_(node.getInt("activation") == 1),
          channelsLast_(node.getInt("channels_last", 1) != 0) {
        require(groups_ > 0, [&] {
            return op_ + ": attribute groups must be positive, got " + std::to_string(groups_);
        });
        const std::int64_t activation = node.getInt("activation");
        require(activation == 0 || activation == 1, [&] {
            return op_ + ": attribute activation must be 0 (none) or 1 (SiLU), got " +
                   std::to_string(activation);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = requiredInput(inputs, 0, op_, "X");
        const Tensor& gamma = requiredInput(inputs, 1, op_, "gamma");
        const Tensor& beta = requiredInput(inputs, 2, op_, "beta");
        requireFloatTensor(x, op_, "X");
        require(x.rank() == 4, [&] {
            return op_ + ": X must be 4-D (" + (channelsLast_ ? "N x H x W x C" : "N x C x H x W") +
                   "), got " + shapeToString(x.shape());
        });
        const std::int64_t n = x.dim(0);
        const std::int64_t c = channelsLast_ ? x.dim(3) : x.dim(1);
        const std::int64_t pixels = channelsLast_ ? x.dim(1) * x.dim(2) : x.dim(2) * x.dim(3);
        require(c % groups_ == 0, [&] {
            return op_ + ": " + std::to_string(c) + " channels do not split into " +
                   std::to_string(groups_) + " groups";
        });
        const std::int64_t perGroup = c / groups_;
        Tensor y(x.dtype(), x.shape());
        dispatchFloat(x.dtype(), [&]<class T>() {
            using C = RowType<T>;
            const std::vector<C> g = vectorParameter<C>(gamma, c, op_, "gamma");
            const std::vector<C> b = vectorParameter<C>(beta, c, op_, "beta");
            // Per (sample, channel): y = x * scale + shift.
            std::vector<C> scale(static_cast<std::size_t>(n * c)), shift(scale.size());
            const T* in = x.data<T>();
            const double groupSize = static_cast<double>(perGroup * pixels);
            ctx.pool().parallelFor(
                n * groups_, groupSize * 4, [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t i = begin; i < end; ++i) {
                        const std::int64_t sample = i / groups_, group = i % groups_;
                        double sum = 0, squares = 0;
                        auto add = [&](const T* p, std::int64_t count) {
                            for (std::int64_t k = 0; k < count; ++k) {
                                const double v = toAccumulator<double>(p[k]);
                                sum += v;
                                squares += v * v;
                            }
                        };
                        if (channelsLast_) {
                            const T* base = in + sample * pixels * c + group * perGroup;
                            for (std::int64_t px = 0; px < pixels; ++px)
                                add(base + px * c, perGroup);
                        } else {
                            add(in + (sample * c + group * perGroup) * pixels, perGroup * pixels);
                        }
                        const double mean = groupSize > 0 ? sum / groupSize : 0.0;
                        const double var =
                            groupSize > 0 ? std::max(0.0, squares / groupSize - mean * mean) : 0.0;
                        const double inv = 1.0 / std::sqrt(var + epsilon_);
                        for (std::int64_t k = 0; k < perGroup; ++k) {
                            const auto ch = static_cast<std::size_t>(group * perGroup + k);
                            const auto at = static_cast<std::size_t>(sample * c) + ch;
                            scale[at] = static_cast<C>(g[ch] * inv);
                            shift[at] = static_cast<C>(b[ch] - mean * g[ch] * inv);
                        }
                    }
                });
            T* out = y.data<T>();
            // NHWC: rows of c channels, one (sample, pixel) each; NCHW: rows of `pixels`, one
            // (sample, channel) each.
            const std::int64_t rows = channelsLast_ ? n * pixels : n * c;
            const std::int64_t width = channelsLast_ ? c : pixels;
            ctx.pool().parallelFor(
                rows, static_cast<double>(width) * (silu_ ? 12 : 3),
                [&](std::int64_t begin, std::int64_t end) {
                    std::vector<C> scratch(std::is_same_v<T, C> ? 0
                                                                : static_cast<std::size_t>(width));
                    for (std::int64_t r = begin; r < end; ++r) {
                        C* row;
                        if constexpr (std::is_same_v<T, C>) {
                            row = out + r * width;
                            RowMap<C>(row, width) = ConstRowMap<C>(in + r * width, width);
                        } else {
                            row = scratch.data();
                            convertRow(in + r * width, row, width);
                        }
                        RowMap<C> v(row, width);
                        if (channelsLast_) {
                            const std::int64_t at = (r / pixels) * c;
                            v = v * ConstRowMap<C>(scale.data() + at, c) +
                                ConstRowMap<C>(shift.data() + at, c);
                        } else {
                            const auto at = static_cast<std::size_t>(r);
                            v = v * scale[at] + shift[at];
                        }
                        if (silu_) v = v * v.unaryExpr(LogisticWithoutSubnormals{});
                        if constexpr (!std::is_same_v<T, C>)
                            convertRow(row, out + r * width, width);
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    std::string op_;
    double epsilon_;
    std::int64_t groups_;
    bool silu_;
    bool channelsLast_;
};

}  // namespace

void registerMsNormalizationOps(KernelRegistry& registry) {
    registry.add<SkipLayerNormKernel<false>>("SkipLayerNormalization", 1, kLatestOpset,
                                             kMicrosoftDomain);
    registry.add<SkipLayerNormKernel<true>>("SkipSimplifiedLayerNormalization", 1, kLatestOpset,
                                            kMicrosoftDomain);
    registry.add<EmbedLayerNormKernel>("EmbedLayerNormalization", 1, kLatestOpset,
                                       kMicrosoftDomain);
    registry.add<GroupNormKernel>("GroupNorm", 1, kLatestOpset, kMicrosoftDomain);
}

}  // namespace onnxlens::engine::ops
