#include "onnxlens/model/ShapeRules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace onnxlens {

namespace {

using Dim = onnx::TensorShapeProto_Dimension;
using Dims = std::vector<Dim>;

Dim known(std::int64_t value) {
    Dim d;
    d.set_dim_value(value);
    return d;
}
Dim unknown() { return Dim{}; }
bool isKnown(const Dim& d) { return d.has_dim_value(); }

std::optional<Dims> shapeOf(const onnx::TypeProto* type) {
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
    const auto& shape = type->tensor_type().shape();
    return Dims(shape.dim().begin(), shape.dim().end());
}

int elemTypeOf(const onnx::TypeProto* type) {
    return type && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

onnx::TypeProto tensorType(int elemType, const std::optional<Dims>& dims) {
    onnx::TypeProto type;
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(elemType);
    if (dims) {
        auto* shape = tensor->mutable_shape();
        for (const auto& d : *dims) *shape->add_dim() = d;
    }
    return type;
}

// Input 0's element type and shape (nullopt shape: rank unknown).
struct TypedInput {
    int elem = 0;
    std::optional<Dims> shape;
};

std::optional<TypedInput> firstInput(const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return std::nullopt;
    return TypedInput{elemTypeOf(in.types[0]), shapeOf(in.types[0])};
}

struct Attributes {
    const onnx::NodeProto& node;
    const onnx::AttributeProto* find(const char* name) const {
        for (const auto& a : node.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    std::int64_t i(const char* name, std::int64_t fallback) const {
        const auto* a = find(name);
        return a && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
    }
    std::string s(const char* name, const std::string& fallback) const {
        const auto* a = find(name);
        return a && a->type() == onnx::AttributeProto::STRING ? a->s() : fallback;
    }
    std::vector<std::int64_t> ints(const char* name) const {
        const auto* a = find(name);
        if (!a || a->type() != onnx::AttributeProto::INTS) return {};
        return {a->ints().begin(), a->ints().end()};
    }
};

std::optional<std::int64_t> normalizedAxis(std::int64_t axis, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return axis < 0 ? axis + r : axis;
}

std::optional<std::vector<std::int64_t>> intValues(const ShapeRuleInputs& in, int input) {
    if (!in.constantValues) return std::nullopt;
    auto values = in.constantValues(input);
    if (!values) return std::nullopt;
    std::vector<std::int64_t> ints;
    for (double v : *values) {
        if (!std::isfinite(v) || std::fabs(v) > 9.0e18) return std::nullopt;
        ints.push_back(static_cast<std::int64_t>(v));
    }
    return ints;
}

bool inputPresent(const onnx::NodeProto& node, int i) {
    return i < node.input_size() && !node.input(i).empty();
}

// Numpy broadcasting of known ranks; a dim stays symbolic when both sides agree on it or the
// other side is 1.
std::optional<Dims> broadcast(const std::vector<std::optional<Dims>>& shapes) {
    std::size_t rank = 0;
    for (const auto& s : shapes) {
        if (!s) return std::nullopt;
        rank = std::max(rank, s->size());
    }
    Dims out(rank, known(1));
    for (const auto& s : shapes) {
        const std::size_t offset = rank - s->size();
        for (std::size_t k = 0; k < s->size(); ++k) {
            Dim& o = out[offset + k];
            const Dim& d = (*s)[k];
            if (isKnown(d) && d.dim_value() == 1) continue;
            if (isKnown(o) && o.dim_value() == 1) {
                o = d;
            } else if (isKnown(o) && isKnown(d)) {
                if (o.dim_value() != d.dim_value()) return std::nullopt;
            } else if (o.has_dim_param() && d.has_dim_param() && o.dim_param() == d.dim_param()) {
                // same symbol
            } else {
                o = unknown();
            }
        }
    }
    return out;
}

using Rule = std::function<std::vector<onnx::TypeProto>(const onnx::NodeProto&, int,
                                                        const ShapeRuleInputs&)>;

std::vector<onnx::TypeProto> sameAsInput(const onnx::NodeProto&, int, const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return {};
    return {tensorType(elemTypeOf(in.types[0]), shapeOf(in.types[0]))};
}

std::vector<onnx::TypeProto> broadcastRule(const onnx::NodeProto&, int, const ShapeRuleInputs& in) {
    std::vector<std::optional<Dims>> shapes;
    for (const auto* t : in.types) shapes.push_back(shapeOf(t));
    if (in.types.empty() || !in.types[0]) return {};
    return {tensorType(elemTypeOf(in.types[0]), broadcast(shapes))};
}

std::vector<onnx::TypeProto> reduceRule(const onnx::NodeProto& node, int,
                                        const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    const int elem = input->elem;
    const auto& shape = input->shape;
    const Attributes attributes{node};
    const bool keepdims = attributes.i("keepdims", 1) != 0;
    std::vector<std::int64_t> axes;
    if (inputPresent(node, 1)) {
        auto values = intValues(in, 1);
        if (!values) {
            // Axes unknown: the rank is known only when the reduced dims are kept.
            if (keepdims && shape) return {tensorType(elem, Dims(shape->size(), unknown()))};
            return {tensorType(elem, std::nullopt)};
        }
        axes = *values;
    }
    if (!shape) return {tensorType(elem, std::nullopt)};
    if (axes.empty()) {
        if (attributes.i("noop_with_empty_axes", 0) != 0) return {tensorType(elem, shape)};
        for (std::size_t k = 0; k < shape->size(); ++k)
            axes.push_back(static_cast<std::int64_t>(k));
    }
    std::set<std::int64_t> reduced;
    for (auto a : axes) {
        auto axis = normalizedAxis(a, shape->size());
        if (!axis) return {};
        reduced.insert(*axis);
    }
    Dims out;
    for (std::size_t k = 0; k < shape->size(); ++k) {
        if (!reduced.count(static_cast<std::int64_t>(k)))
            out.push_back((*shape)[k]);
        else if (keepdims)
            out.push_back(known(1));
    }
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> padRule(const onnx::NodeProto& node, int, const ShapeRuleInputs& in,
                                     int elem, const Dims& shape) {
    const auto pads = intValues(in, 1);
    std::vector<std::int64_t> axes;
    if (inputPresent(node, 3)) {
        auto values = intValues(in, 3);
        if (!values) return {tensorType(elem, Dims(shape.size(), unknown()))};
        for (auto a : *values) {
            auto axis = normalizedAxis(a, shape.size());
            if (!axis) return {};
            axes.push_back(*axis);
        }
    } else {
        for (std::size_t k = 0; k < shape.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    }
    if (!pads || pads->size() != 2 * axes.size())
        return {tensorType(elem, Dims(shape.size(), unknown()))};
    Dims out = shape;
    for (std::size_t k = 0; k < axes.size(); ++k) {
        Dim& d = out[static_cast<std::size_t>(axes[k])];
        const std::int64_t extra = (*pads)[k] + (*pads)[k + axes.size()];
        if (isKnown(d))
            d = known(std::max<std::int64_t>(0, d.dim_value() + extra));
        else if (extra != 0)
            d = unknown();
    }
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> resizeRule(const onnx::NodeProto& node, int, const ShapeRuleInputs& in,
                                        int elem, const Dims& shape) {
    const std::size_t rank = shape.size();
    const Attributes attributes{node};
    std::vector<std::int64_t> axes = attributes.ints("axes");
    if (axes.empty())
        for (std::size_t k = 0; k < rank; ++k) axes.push_back(static_cast<std::int64_t>(k));
    for (auto& a : axes) {
        auto axis = normalizedAxis(a, rank);
        if (!axis) return {};
        a = *axis;
    }
    Dims out = shape;
    const auto sizes = inputPresent(node, 3) ? intValues(in, 3) : std::nullopt;
    const auto scales =
        inputPresent(node, 2) && in.constantValues ? in.constantValues(2) : std::nullopt;
    if (sizes && sizes->size() == axes.size()) {
        const std::string policy = attributes.s("keep_aspect_ratio_policy", "stretch");
        if (policy == "stretch") {
            for (std::size_t k = 0; k < axes.size(); ++k) out[axes[k]] = known((*sizes)[k]);
        } else {
            // not_larger / not_smaller: one scale for every axis, from the extreme ratio.
            double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
            for (std::size_t k = 0; k < axes.size(); ++k) {
                const Dim& d = shape[axes[k]];
                if (!isKnown(d) || d.dim_value() == 0)
                    return {tensorType(elem, Dims(rank, unknown()))};
                const double ratio = double((*sizes)[k]) / double(d.dim_value());
                scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
            }
            for (std::size_t k = 0; k < axes.size(); ++k)
                out[axes[k]] = known(static_cast<std::int64_t>(
                    std::round(scale * double(shape[axes[k]].dim_value()))));
        }
    } else if (scales && !scales->empty() && scales->size() == axes.size()) {
        for (std::size_t k = 0; k < axes.size(); ++k) {
            Dim& d = out[axes[k]];
            if (isKnown(d))
                d = known(
                    static_cast<std::int64_t>(std::floor(double(d.dim_value()) * (*scales)[k])));
            else if ((*scales)[k] != 1.0)
                d = unknown();
        }
    } else {
        for (auto a : axes) out[a] = unknown();
    }
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> splitRule(const onnx::NodeProto& node, int,
                                       const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    const int elem = input->elem;
    const auto& shape = input->shape;
    const int outputs = node.output_size();
    if (!shape) return std::vector<onnx::TypeProto>(outputs, tensorType(elem, std::nullopt));
    const Attributes attributes{node};
    auto axis = normalizedAxis(attributes.i("axis", 0), shape->size());
    if (!axis) return {};
    std::vector<std::optional<std::int64_t>> lengths(outputs);
    const Dim& whole = (*shape)[*axis];
    if (inputPresent(node, 1)) {
        auto split = intValues(in, 1);
        if (split && static_cast<int>(split->size()) == outputs)
            for (int k = 0; k < outputs; ++k) lengths[k] = (*split)[k];
    } else if (isKnown(whole) && outputs > 0) {
        // Split-18 with num_outputs (or none): equal parts, the last one smaller when uneven.
        const std::int64_t n = whole.dim_value();
        const std::int64_t part = (n + outputs - 1) / outputs;
        for (int k = 0; k < outputs; ++k)
            lengths[k] = std::max<std::int64_t>(0, std::min(part, n - part * k));
    }
    std::vector<onnx::TypeProto> types;
    for (int k = 0; k < outputs; ++k) {
        Dims out = *shape;
        out[*axis] = lengths[k] ? known(*lengths[k]) : unknown();
        types.push_back(tensorType(elem, out));
    }
    return types;
}

// Output length of one spatial axis of a pooling or convolution window.
Dim windowOutput(const Dim& input, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                 std::int64_t padBegin, std::int64_t padEnd, bool ceilMode,
                 const std::string& autoPad) {
    if (!isKnown(input) || stride <= 0 || kernel <= 0 || dilation <= 0) return unknown();
    const std::int64_t n = input.dim_value();
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return known((n + stride - 1) / stride);
    const std::int64_t effective = dilation * (kernel - 1) + 1;
    const std::int64_t span = n + padBegin + padEnd - effective;
    if (span < 0) return unknown();
    std::int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
    // The last window must start inside the input or its left padding.
    if (ceilMode && (out - 1) * stride >= n + padBegin) --out;
    return known(out);
}

std::vector<onnx::TypeProto> poolRule(const onnx::NodeProto& node, int, const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    const int elem = input->elem;
    const auto& shape = input->shape;
    const Attributes attributes{node};
    const auto kernel = attributes.ints("kernel_shape");
    if (!shape || shape->size() < 2 || kernel.size() != shape->size() - 2)
        return {tensorType(elem, std::nullopt)};
    const std::size_t spatial = kernel.size();
    auto strides = attributes.ints("strides");
    auto dilations = attributes.ints("dilations");
    auto pads = attributes.ints("pads");
    strides.resize(spatial, 1);
    dilations.resize(spatial, 1);
    if (pads.size() != 2 * spatial) pads.assign(2 * spatial, 0);
    const std::string autoPad = attributes.s("auto_pad", "NOTSET");
    const bool ceilMode = attributes.i("ceil_mode", 0) != 0;
    Dims out = {(*shape)[0], (*shape)[1]};
    for (std::size_t k = 0; k < spatial; ++k)
        out.push_back(windowOutput((*shape)[k + 2], kernel[k], strides[k], dilations[k], pads[k],
                                   pads[k + spatial], ceilMode, autoPad));
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> deformConvRule(const onnx::NodeProto& node, int,
                                            const ShapeRuleInputs& in) {
    if (in.types.size() < 2 || !in.types[0]) return {};
    const int elem = elemTypeOf(in.types[0]);
    const auto x = shapeOf(in.types[0]);
    const auto w = shapeOf(in.types[1]);
    if (!x || !w || x->size() < 3 || w->size() != x->size())
        return {tensorType(elem, std::nullopt)};
    const std::size_t spatial = x->size() - 2;
    const Attributes attributes{node};
    auto kernel = attributes.ints("kernel_shape");
    if (kernel.size() != spatial) {
        kernel.clear();
        for (std::size_t k = 0; k < spatial; ++k)
            kernel.push_back(isKnown((*w)[k + 2]) ? (*w)[k + 2].dim_value() : -1);
    }
    auto strides = attributes.ints("strides");
    auto dilations = attributes.ints("dilations");
    auto pads = attributes.ints("pads");
    strides.resize(spatial, 1);
    dilations.resize(spatial, 1);
    if (pads.size() != 2 * spatial) pads.assign(2 * spatial, 0);
    Dims out = {(*x)[0], (*w)[0]};
    for (std::size_t k = 0; k < spatial; ++k)
        out.push_back(windowOutput((*x)[k + 2], kernel[k], strides[k], dilations[k], pads[k],
                                   pads[k + spatial], false, "NOTSET"));
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> castRule(const onnx::NodeProto& node, int, const ShapeRuleInputs& in) {
    const auto to = Attributes{node}.i("to", 0);
    const auto shape = in.types.empty() ? std::nullopt : shapeOf(in.types[0]);
    return {tensorType(static_cast<int>(to), shape)};
}

std::vector<onnx::TypeProto> castLikeRule(const onnx::NodeProto&, int, const ShapeRuleInputs& in) {
    if (in.types.size() < 2 || !in.types[1]) return {};
    return {tensorType(elemTypeOf(in.types[1]), shapeOf(in.types[0]))};
}

std::vector<onnx::TypeProto> quantizeRule(const onnx::NodeProto& node, int,
                                          const ShapeRuleInputs& in) {
    if (in.types.empty()) return {};
    int elem = static_cast<int>(Attributes{node}.i("output_dtype", 0));
    if (elem == 0 && in.types.size() > 2 && in.types[2]) elem = elemTypeOf(in.types[2]);
    if (elem == 0) elem = onnx::TensorProto::UINT8;
    return {tensorType(elem, shapeOf(in.types[0]))};
}

std::vector<onnx::TypeProto> dequantizeRule(const onnx::NodeProto& node, int,
                                            const ShapeRuleInputs& in) {
    if (in.types.size() < 2) return {};
    int elem = static_cast<int>(Attributes{node}.i("output_dtype", 0));
    if (elem == 0) elem = elemTypeOf(in.types[1]);
    if (elem == 0) return {};
    return {tensorType(elem, shapeOf(in.types[0]))};
}

std::vector<onnx::TypeProto> dftRule(const onnx::NodeProto& node, int opset,
                                     const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    const int elem = input->elem;
    const auto& shape = input->shape;
    if (!shape || shape->size() < 2) return {tensorType(elem, std::nullopt)};
    const Attributes attributes{node};
    std::int64_t axisValue = opset >= 20 ? -2 : attributes.i("axis", 1);
    if (opset >= 20 && inputPresent(node, 2)) {
        auto axis = intValues(in, 2);
        if (!axis || axis->size() != 1) return {tensorType(elem, Dims(shape->size(), unknown()))};
        axisValue = (*axis)[0];
    }
    // The last dim holds the real and imaginary parts; it is never the transformed axis.
    const auto axis = normalizedAxis(axisValue, shape->size());
    if (!axis || *axis == static_cast<std::int64_t>(shape->size()) - 1) return {};
    Dims out = *shape;
    out.back() = known(2);
    Dim length = (*shape)[*axis];
    if (inputPresent(node, 1)) {
        auto n = intValues(in, 1);
        length = n && n->size() == 1 ? known((*n)[0]) : unknown();
    }
    if (attributes.i("onesided", 0) != 0 && attributes.i("inverse", 0) == 0)
        length = isKnown(length) ? known(length.dim_value() / 2 + 1) : unknown();
    out[*axis] = length;
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> centerCropPadRule(const onnx::NodeProto& node, int,
                                               const ShapeRuleInputs& in, int elem,
                                               const Dims& shape) {
    std::vector<std::int64_t> axes = Attributes{node}.ints("axes");
    if (axes.empty())
        for (std::size_t k = 0; k < shape.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    Dims out = shape;
    auto target = intValues(in, 1);
    for (std::size_t k = 0; k < axes.size(); ++k) {
        auto axis = normalizedAxis(axes[k], shape.size());
        if (!axis) return {};
        out[*axis] = target && target->size() == axes.size() ? known((*target)[k]) : unknown();
    }
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> col2ImRule(const onnx::NodeProto&, int, const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    const int elem = input->elem;
    const auto& shape = input->shape;
    const auto image = intValues(in, 1);
    const auto block = intValues(in, 2);
    if (!shape || shape->size() != 3 || !image) return {tensorType(elem, std::nullopt)};
    Dims out = {(*shape)[0], unknown()};
    if (block && isKnown((*shape)[1])) {
        std::int64_t blockSize = 1;
        for (auto b : *block) {
            if (b <= 0 || blockSize > std::numeric_limits<std::int64_t>::max() / b) {
                blockSize = 0;  // hostile block shape: leave the dim unknown
                break;
            }
            blockSize *= b;
        }
        if (blockSize > 0) out[1] = known((*shape)[1].dim_value() / blockSize);
    }
    for (auto d : *image) out.push_back(known(d));
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> affineGridRule(const onnx::NodeProto&, int,
                                            const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return {};
    const int elem = elemTypeOf(in.types[0]);
    auto size = intValues(in, 1);
    if (!size || (size->size() != 4 && size->size() != 5)) {
        const auto sizeShape = in.types.size() > 1 ? shapeOf(in.types[1]) : std::nullopt;
        if (sizeShape && sizeShape->size() == 1 && isKnown((*sizeShape)[0])) {
            const auto n = (*sizeShape)[0].dim_value();
            Dims out(static_cast<std::size_t>(n - 1), unknown());
            if (n == 4 || n == 5) {
                out.back() = known(n - 2);
                return {tensorType(elem, out)};
            }
        }
        return {tensorType(elem, std::nullopt)};
    }
    Dims out = {known((*size)[0])};
    for (std::size_t k = 2; k < size->size(); ++k) out.push_back(known((*size)[k]));
    out.push_back(known(static_cast<std::int64_t>(size->size()) - 2));
    return {tensorType(elem, out)};
}

// ImageDecoder-20: uint8 [H, W, C]; H and W come from the bytes, C is 1 for Grayscale, else 3.
std::vector<onnx::TypeProto> imageDecoderRule(const onnx::NodeProto& node, int,
                                              const ShapeRuleInputs&) {
    std::string format = "RGB";
    for (const auto& a : node.attribute())
        if (a.name() == "pixel_format") format = a.s();
    return {tensorType(onnx::TensorProto::UINT8,
                       Dims{unknown(), unknown(), known(format == "Grayscale" ? 1 : 3)})};
}

std::vector<onnx::TypeProto> gridSampleRule(const onnx::NodeProto&, int,
                                            const ShapeRuleInputs& in) {
    if (in.types.size() < 2 || !in.types[0]) return {};
    const int elem = elemTypeOf(in.types[0]);
    const auto x = shapeOf(in.types[0]);
    const auto grid = shapeOf(in.types[1]);
    if (!x || !grid || x->size() < 3 || grid->size() != x->size())
        return {tensorType(elem, std::nullopt)};
    Dims out = {(*x)[0], (*x)[1]};
    for (std::size_t k = 1; k + 1 < grid->size(); ++k) out.push_back((*grid)[k]);
    return {tensorType(elem, out)};
}

std::vector<onnx::TypeProto> attentionRule(const onnx::NodeProto& node, int,
                                           const ShapeRuleInputs& in) {
    if (in.types.size() < 3 || !in.types[0]) return {};
    const int elem = elemTypeOf(in.types[0]);
    const auto q = shapeOf(in.types[0]);
    const auto v = shapeOf(in.types[2]);
    std::vector<onnx::TypeProto> types;
    if (q && v && q->size() == 4 && v->size() == 4) {
        types.push_back(tensorType(elem, Dims{(*q)[0], (*q)[1], (*q)[2], (*v)[3]}));
    } else if (q && v && q->size() == 3 && v->size() == 3) {
        const Attributes attributes{node};
        const auto qHeads = attributes.i("q_num_heads", 0);
        const auto kvHeads = attributes.i("kv_num_heads", 0);
        Dim hidden = unknown();
        if (qHeads > 0 && kvHeads > 0 && isKnown((*v)[2]))
            hidden = known(qHeads * ((*v)[2].dim_value() / kvHeads));
        types.push_back(tensorType(elem, Dims{(*q)[0], (*q)[1], hidden}));
    } else {
        types.push_back(tensorType(elem, std::nullopt));
    }
    return types;
}

std::vector<onnx::TypeProto> boolSameShape(const onnx::NodeProto&, int, const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return {};
    return {tensorType(onnx::TensorProto::BOOL, shapeOf(in.types[0]))};
}

// StringSplit: the substrings gain a last axis as long as the longest split (known only at run
// time); the counts keep the input's shape.
std::vector<onnx::TypeProto> stringSplitRule(const onnx::NodeProto&, int,
                                             const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return {};
    auto shape = shapeOf(in.types[0]);
    std::optional<Dims> substrings;
    if (shape) {
        substrings = *shape;
        substrings->push_back(unknown());
    }
    return {tensorType(onnx::TensorProto::STRING, substrings),
            tensorType(onnx::TensorProto::INT64, shape)};
}

std::vector<onnx::TypeProto> optionalHasElementRule(const onnx::NodeProto&, int,
                                                    const ShapeRuleInputs&) {
    return {tensorType(onnx::TensorProto::BOOL, Dims{})};
}

std::vector<onnx::TypeProto> optionalGetElementRule(const onnx::NodeProto&, int,
                                                    const ShapeRuleInputs& in) {
    if (in.types.empty() || !in.types[0]) return {};
    const auto& type = *in.types[0];
    if (type.has_optional_type()) return {type.optional_type().elem_type()};
    return {type};
}

// Rules that need input 0's shape: without it only the element type is known.
using ShapedRule = std::vector<onnx::TypeProto> (*)(const onnx::NodeProto&, int,
                                                    const ShapeRuleInputs&, int, const Dims&);
template <ShapedRule R>
std::vector<onnx::TypeProto> shaped(const onnx::NodeProto& node, int opset,
                                    const ShapeRuleInputs& in) {
    const auto input = firstInput(in);
    if (!input) return {};
    if (!input->shape) return {tensorType(input->elem, std::nullopt)};
    return R(node, opset, in, input->elem, *input->shape);
}

const std::map<std::string, Rule>& rules() {
    static const std::map<std::string, Rule> table = {
        {"Mish", sameAsInput},
        {"BitwiseNot", sameAsInput},
        {"Gelu", sameAsInput},
        {"GroupNormalization", sameAsInput},
        {"RMSNormalization", sameAsInput},
        {"RotaryEmbedding", sameAsInput},
        {"Swish", sameAsInput},
        {"ScatterElements", sameAsInput},
        {"ScatterND", sameAsInput},
        {"TensorScatter", sameAsInput},
        {"BitwiseAnd", broadcastRule},
        {"BitwiseOr", broadcastRule},
        {"BitwiseXor", broadcastRule},
        {"StringConcat", broadcastRule},
        {"RegexFullMatch", boolSameShape},
        {"StringSplit", stringSplitRule},
        {"ReduceL1", reduceRule},
        {"ReduceL2", reduceRule},
        {"ReduceLogSum", reduceRule},
        {"ReduceLogSumExp", reduceRule},
        {"ReduceMax", reduceRule},
        {"ReduceMean", reduceRule},
        {"ReduceMin", reduceRule},
        {"ReduceProd", reduceRule},
        {"ReduceSum", reduceRule},
        {"ReduceSumSquare", reduceRule},
        {"Pad", shaped<padRule>},
        {"Resize", shaped<resizeRule>},
        {"Split", splitRule},
        {"AveragePool", poolRule},
        {"LpPool", poolRule},
        {"DeformConv", deformConvRule},
        {"Cast", castRule},
        {"CastLike", castLikeRule},
        {"QuantizeLinear", quantizeRule},
        {"DequantizeLinear", dequantizeRule},
        {"DFT", dftRule},
        {"CenterCropPad", shaped<centerCropPadRule>},
        {"Col2Im", col2ImRule},
        {"AffineGrid", affineGridRule},
        {"GridSample", gridSampleRule},
        {"ImageDecoder", imageDecoderRule},
        {"Attention", attentionRule},
        {"OptionalHasElement", optionalHasElementRule},
        {"OptionalGetElement", optionalGetElementRule},
    };
    return table;
}

}  // namespace

bool hasShapeRule(const std::string& opType) { return rules().count(opType) > 0; }

std::vector<onnx::TypeProto> inferWithShapeRules(const onnx::NodeProto& node, int opsetVersion,
                                                 const ShapeRuleInputs& inputs) {
    auto it = rules().find(node.op_type());
    if (it == rules().end()) return {};
    try {
        return it->second(node, opsetVersion, inputs);
    } catch (const std::exception&) {
        return {};  // a rule never fails a model: the edge just stays without a shape
    }
}

}  // namespace onnxlens
