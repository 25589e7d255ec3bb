// Schemas of ONNX Runtime's quantized operators (com.microsoft, version 1) after
// ContribOperators.md: the integer products (DynamicQuantizeMatMul, MatMulIntegerToFloat,
// MatMulNBits, QGemm), GatherBlockQuantized, DynamicQuantizeLSTM and the QLinear* operators of
// the QOperator format. Output shapes as the float counterparts define them.
#include <algorithm>
#include <cmath>

#include "MicrosoftOpSchemaSupport.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"

namespace onnxlens::ms {

namespace {

using AP = onnx::AttributeProto;
constexpr auto kOptional = onnx::OpSchema::Optional;
constexpr auto kVariadic = onnx::OpSchema::Variadic;

bool sameDim(const Dim& a, const Dim& b) {
    if (a.has_dim_value() && b.has_dim_value()) return a.dim_value() == b.dim_value();
    return a.has_dim_param() && b.has_dim_param() && !a.dim_param().empty() &&
           a.dim_param() == b.dim_param();
}

bool isOne(const Dim& d) { return d.has_dim_value() && d.dim_value() == 1; }

// Numpy broadcasting of two shapes; a dim neither side pins down stays unknown.
std::optional<Dims> broadcast(const Dims& a, const Dims& b) {
    const std::size_t rank = std::max(a.size(), b.size());
    Dims out(rank, known(1));
    for (std::size_t k = 0; k < rank; ++k) {
        const Dim* x = k + a.size() >= rank ? &a[k + a.size() - rank] : nullptr;
        const Dim* y = k + b.size() >= rank ? &b[k + b.size() - rank] : nullptr;
        if (!x || isOne(*x)) {
            out[k] = y ? *y : known(1);
        } else if (!y || isOne(*y) || sameDim(*x, *y)) {
            out[k] = *x;
        } else if (x->has_dim_value() && y->has_dim_value()) {
            fail_shape_inference("incompatible dimensions ", x->dim_value(), " and ",
                                 y->dim_value());
        } else {
            out[k] = unknown();
        }
    }
    return out;
}

// numpy.matmul of A and B (ranks >= 1).
std::optional<Dims> matmulShape(const std::optional<Dims>& a, const std::optional<Dims>& b) {
    if (!a || !b || a->empty() || b->empty()) return std::nullopt;
    Dims left = *a, right = *b;
    const bool vecA = left.size() == 1, vecB = right.size() == 1;
    if (vecA) left.insert(left.begin(), known(1));
    if (vecB) right.push_back(known(1));
    auto batch =
        broadcast(Dims(left.begin(), left.end() - 2), Dims(right.begin(), right.end() - 2));
    if (!batch) return std::nullopt;
    Dims out = *batch;
    if (!vecA) out.push_back(left[left.size() - 2]);
    if (!vecB) out.push_back(right.back());
    return out;
}

}  // namespace

onnx::OpSchema matMulIntegerToFloatSchema(const char* domain) {
    auto s = schema("MatMulIntegerToFloat", domain, __LINE__);
    s.Input(0, "A", "", "T1")
        .Input(1, "B", "", "T2")
        .Input(2, "a_scale", "", "T3")
        .Input(3, "b_scale", "", "T3")
        .Input(4, "a_zero_point", "", "T1", kOptional)
        .Input(5, "b_zero_point", "", "T2", kOptional)
        .Input(6, "bias", "", "T3", kOptional)
        .Output(0, "Y", "", "T3")
        .TypeConstraint("T1", int8Types(), "")
        .TypeConstraint("T2", int8Types(), "")
        .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            setOutput(ctx, 0, elemTypeOf(ctx, 2), matmulShape(shapeOf(ctx, 0), shapeOf(ctx, 1)));
        });
    return s;
}

namespace {

void registerProducts() {
    {
        auto s = schema("DynamicQuantizeMatMul", kMicrosoftDomain, __LINE__);
        s.Input(0, "A", "", "T1")
            .Input(1, "B", "", "T2")
            .Input(2, "b_scale", "", "T1")
            .Input(3, "b_zero_point", "", "T2", kOptional)
            .Input(4, "bias", "", "T1", kOptional)
            .Output(0, "Y", "", "T1")
            .TypeConstraint("T1", {"tensor(float)"}, "")
            .TypeConstraint("T2", int8Types(), "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                setOutput(ctx, 0, elemTypeOf(ctx, 0),
                          matmulShape(shapeOf(ctx, 0), shapeOf(ctx, 1)));
            });
        onnx::RegisterSchema(std::move(s));
    }
    onnx::RegisterSchema(matMulIntegerToFloatSchema(kMicrosoftDomain));
    {
        auto s = schema("MatMulNBits", kMicrosoftDomain, __LINE__);
        s.Attr("K", "", AP::INT, true)
            .Attr("N", "", AP::INT, true)
            .Attr("accuracy_level", "", AP::INT, false)
            .Attr("bits", "", AP::INT, false)
            .Attr("block_size", "", AP::INT, true)
            .Attr("weight_prepacked", "", AP::INT, false)
            .Input(0, "A", "", "T1")
            .Input(1, "B", "", "T2")
            .Input(2, "scales", "", "T1")
            .Input(3, "zero_points", "", "T3", kOptional)
            .Input(4, "g_idx", "", "T4", kOptional)
            .Input(5, "bias", "", "T1", kOptional)
            .Output(0, "Y", "", "T1")
            .TypeConstraint("T1", floatTypes(), "")
            .TypeConstraint("T2", {"tensor(uint8)"}, "")
            .TypeConstraint(
                "T3", {"tensor(uint8)", "tensor(float16)", "tensor(float)", "tensor(bfloat16)"}, "")
            .TypeConstraint("T4", {"tensor(int32)"}, "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                auto a = shapeOf(ctx, 0);
                const std::int64_t n = intAttribute(ctx, "N", 0);
                if (a && !a->empty())
                    a->back() = n > 0 ? known(n) : unknown();
                else
                    a.reset();
                setOutput(ctx, 0, elemTypeOf(ctx, 0), a);
            });
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("QGemm", kMicrosoftDomain, __LINE__);
        s.Attr("alpha", "", AP::FLOAT, false)
            .Attr("transA", "", AP::INT, false)
            .Attr("transB", "", AP::INT, false)
            .Input(0, "A", "", "TA")
            .Input(1, "a_scale", "", "T")
            .Input(2, "a_zero_point", "", "TA")
            .Input(3, "B", "", "TB")
            .Input(4, "b_scale", "", "T")
            .Input(5, "b_zero_point", "", "TB")
            .Input(6, "C", "", "TC", kOptional)
            .Input(7, "y_scale", "", "T", kOptional)
            .Input(8, "y_zero_point", "", "TYZ", kOptional)
            .Output(0, "Y", "", "TY")
            .TypeConstraint("T", {"tensor(float)"}, "")
            .TypeConstraint("TA", int8Types(), "")
            .TypeConstraint("TB", int8Types(), "")
            .TypeConstraint("TC", {"tensor(int32)"}, "")
            .TypeConstraint("TYZ", int8Types(), "")
            .TypeConstraint("TY", {"tensor(float)", "tensor(uint8)", "tensor(int8)"}, "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                // Quantized output (y_scale given): y_zero_point's type; float otherwise.
                int type = 0;
                if (ctx.getNumInputs() <= 7)
                    type = onnx::TensorProto::FLOAT;
                else if (elemTypeOf(ctx, 8) != 0)
                    type = elemTypeOf(ctx, 8);
                else if (ctx.getNumInputs() <= 8 && elemTypeOf(ctx, 7) != 0)
                    type = onnx::TensorProto::UINT8;
                const auto a = shapeOf(ctx, 0, 2), b = shapeOf(ctx, 3, 2);
                std::optional<Dims> y;
                if (a && b)
                    y = Dims{(*a)[intAttribute(ctx, "transA", 0) ? 1 : 0],
                             (*b)[intAttribute(ctx, "transB", 0) ? 0 : 1]};
                setOutput(ctx, 0, type, y);
            });
        onnx::RegisterSchema(std::move(s));
    }
}

void registerGatherBlockQuantized() {
    auto s = schema("GatherBlockQuantized", kMicrosoftDomain, __LINE__);
    s.Attr("bits", "", AP::INT, false)
        .Attr("block_size", "", AP::INT, false)
        .Attr("gather_axis", "", AP::INT, false)
        .Attr("quantize_axis", "", AP::INT, false)
        .Input(0, "data", "", "T1")
        .Input(1, "indices", "", "Tind")
        .Input(2, "scales", "", "T2")
        .Input(3, "zero_points", "", "T1", kOptional)
        .Output(0, "output", "", "T2")
        // int4 / uint4 / float8 data: types the linked onnx library does not know.
        .TypeConstraint("T1", {"tensor(uint8)"}, "")
        .TypeConstraint("T2", floatTypes(), "")
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            const auto data = shapeOf(ctx, 0);
            const auto indices = shapeOf(ctx, 1);
            std::optional<Dims> out;
            if (data && indices && !data->empty()) {
                const auto rank = static_cast<std::int64_t>(data->size());
                std::int64_t axis = intAttribute(ctx, "gather_axis", 0);
                if (axis < 0) axis += rank;
                if (axis < 0 || axis >= rank) fail_shape_inference("gather_axis out of range");
                Dims d = *data;
                // uint8 data packs 8 / bits values per byte along the last axis.
                const std::int64_t bits = intAttribute(ctx, "bits", 4);
                if (elemTypeOf(ctx, 0) == onnx::TensorProto::UINT8 && (bits == 2 || bits == 4))
                    d.back() = times(d.back(), 8 / bits);
                out = Dims(d.begin(), d.begin() + axis);
                out->insert(out->end(), indices->begin(), indices->end());
                out->insert(out->end(), d.begin() + axis + 1, d.end());
            }
            setOutput(ctx, 0, elemTypeOf(ctx, 2), out);
        });
    onnx::RegisterSchema(std::move(s));
}

void registerDynamicQuantizeLstm() {
    auto s = schema("DynamicQuantizeLSTM", kMicrosoftDomain, __LINE__);
    s.Attr("activation_alpha", "", AP::FLOATS, false)
        .Attr("activation_beta", "", AP::FLOATS, false)
        .Attr("activations", "", AP::STRINGS, false)
        .Attr("clip", "", AP::FLOAT, false)
        .Attr("direction", "", AP::STRING, false)
        .Attr("hidden_size", "", AP::INT, false)
        .Attr("input_forget", "", AP::INT, false)
        .Input(0, "X", "", "T")
        .Input(1, "W", "", "T2")
        .Input(2, "R", "", "T2")
        .Input(3, "B", "", "T", kOptional)
        .Input(4, "sequence_lens", "", "T1", kOptional)
        .Input(5, "initial_h", "", "T", kOptional)
        .Input(6, "initial_c", "", "T", kOptional)
        .Input(7, "P", "", "T", kOptional)
        .Input(8, "W_scale", "", "T")
        .Input(9, "W_zero_point", "", "T2")
        .Input(10, "R_scale", "", "T")
        .Input(11, "R_zero_point", "", "T2")
        .Output(0, "Y", "", "T", kOptional)
        .Output(1, "Y_h", "", "T", kOptional)
        .Output(2, "Y_c", "", "T", kOptional)
        .TypeConstraint("T", {"tensor(float)"}, "")
        .TypeConstraint("T1", {"tensor(int32)"}, "")
        .TypeConstraint("T2", int8Types(), "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            const int t = elemTypeOf(ctx, 0);
            const auto x = shapeOf(ctx, 0, 3);
            const std::int64_t hidden = intAttribute(ctx, "hidden_size", 0);
            const auto* direction = ctx.getAttribute("direction");
            const std::int64_t dirs = direction && direction->s() == "bidirectional" ? 2 : 1;
            const Dim h = hidden > 0 ? known(hidden) : unknown();
            std::optional<Dims> y, state;
            if (x) {
                y = Dims{(*x)[0], known(dirs), (*x)[1], h};
                state = Dims{known(dirs), (*x)[1], h};
            }
            setOutput(ctx, 0, t, y);
            setOutput(ctx, 1, t, state);
            setOutput(ctx, 2, t, state);
        });
    onnx::RegisterSchema(std::move(s));
}

// QLinearAdd / QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
// C_zero_point; C broadcast from A and B.
void registerQLinearBinary(const char* name, int line) {
    auto s = schema(name, kMicrosoftDomain, line);
    s.Input(0, "A", "", "T")
        .Input(1, "A_scale", "", "tensor(float)")
        .Input(2, "A_zero_point", "", "T", kOptional)
        .Input(3, "B", "", "T")
        .Input(4, "B_scale", "", "tensor(float)")
        .Input(5, "B_zero_point", "", "T", kOptional)
        .Input(6, "C_scale", "", "tensor(float)")
        .Input(7, "C_zero_point", "", "T", kOptional)
        .Output(0, "C", "", "T")
        .TypeConstraint("T", int8Types(), "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            const auto a = shapeOf(ctx, 0), b = shapeOf(ctx, 3);
            setOutput(ctx, 0, elemTypeOf(ctx, 0), a && b ? broadcast(*a, *b) : std::nullopt);
        });
    onnx::RegisterSchema(std::move(s));
}

// QLinearSigmoid / QLinearLeakyRelu: X, X_scale, X_zero_point, Y_scale, Y_zero_point.
void registerQLinearUnary(const char* name, bool alpha, int line) {
    auto s = schema(name, kMicrosoftDomain, line);
    if (alpha) s.Attr("alpha", "", AP::FLOAT, false);
    s.Input(0, "X", "", "T")
        .Input(1, "X_scale", "", "tensor(float)")
        .Input(2, "X_zero_point", "", "T", kOptional)
        .Input(3, "Y_scale", "", "tensor(float)")
        .Input(4, "Y_zero_point", "", "T", kOptional)
        .Output(0, "Y", "", "T")
        .TypeConstraint("T", int8Types(), "")
        .TypeAndShapeInferenceFunction(sameAsFirstInput);
    onnx::RegisterSchema(std::move(s));
}

// Output extent of one pooled axis (auto_pad, pads, strides, ceil_mode as AveragePool).
Dim pooledExtent(const Dim& in, std::int64_t kernel, std::int64_t stride, std::int64_t padBegin,
                 std::int64_t padEnd, const std::string& autoPad, bool ceil) {
    if (!in.has_dim_value() || kernel <= 0 || stride <= 0) return unknown();
    const double extent = static_cast<double>(in.dim_value());
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
        return known(static_cast<std::int64_t>(std::ceil(extent / static_cast<double>(stride))));
    if (autoPad == "VALID") {
        if (kernel > in.dim_value())
            fail_shape_inference("the pooling window is larger than the input");
        return known(static_cast<std::int64_t>(
            std::ceil((extent - static_cast<double>(kernel) + 1) / static_cast<double>(stride))));
    }
    const double span =
        extent + static_cast<double>(padBegin + padEnd) - static_cast<double>(kernel);
    if (span < 0) fail_shape_inference("the pooling window is larger than the padded input");
    const double steps = span / static_cast<double>(stride);
    return known(static_cast<std::int64_t>(ceil ? std::ceil(steps) : std::floor(steps)) + 1);
}

void registerQLinearPools() {
    {
        auto s = schema("QLinearAveragePool", kMicrosoftDomain, __LINE__);
        s.Attr("auto_pad", "", AP::STRING, false)
            .Attr("ceil_mode", "", AP::INT, false)
            .Attr("channels_last", "", AP::INT, false)
            .Attr("count_include_pad", "", AP::INT, false)
            .Attr("kernel_shape", "", AP::INTS, true)
            .Attr("pads", "", AP::INTS, false)
            .Attr("strides", "", AP::INTS, false)
            .Input(0, "X", "", "T")
            .Input(1, "x_scale", "", "tensor(float)")
            .Input(2, "x_zero_point", "", "T", kOptional)
            .Input(3, "y_scale", "", "tensor(float)")
            .Input(4, "y_zero_point", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", int8Types(), "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                auto x = shapeOf(ctx, 0);
                std::vector<std::int64_t> kernel, strides, pads;
                onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel);
                onnx::getRepeatedAttribute(ctx, "strides", strides);
                onnx::getRepeatedAttribute(ctx, "pads", pads);
                const auto spatial = kernel.size();
                std::optional<Dims> y;
                if (x && x->size() == spatial + 2 &&
                    (strides.empty() || strides.size() == spatial) &&
                    (pads.empty() || pads.size() == 2 * spatial)) {
                    const bool last = intAttribute(ctx, "channels_last", 0) != 0;
                    const auto* autoPad = ctx.getAttribute("auto_pad");
                    const std::string mode = autoPad ? autoPad->s() : "NOTSET";
                    y = *x;
                    for (std::size_t k = 0; k < spatial; ++k) {
                        const std::size_t axis = last ? 1 + k : 2 + k;
                        (*y)[axis] = pooledExtent(
                            (*x)[axis], kernel[k], strides.empty() ? 1 : strides[k],
                            pads.empty() ? 0 : pads[k], pads.empty() ? 0 : pads[k + spatial], mode,
                            intAttribute(ctx, "ceil_mode", 0) != 0);
                    }
                }
                setOutput(ctx, 0, elemTypeOf(ctx, 0), y);
            });
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("QLinearGlobalAveragePool", kMicrosoftDomain, __LINE__);
        s.Attr("channels_last", "", AP::INT, false)
            .Input(0, "X", "", "T")
            .Input(1, "x_scale", "", "tensor(float)")
            .Input(2, "x_zero_point", "", "T")
            .Input(3, "y_scale", "", "tensor(float)")
            .Input(4, "y_zero_point", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", int8Types(), "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                auto x = shapeOf(ctx, 0);
                if (x && x->size() >= 3) {
                    const bool last = intAttribute(ctx, "channels_last", 0) != 0;
                    for (std::size_t k = 0; k + 2 < x->size(); ++k)
                        (*x)[last ? 1 + k : 2 + k] = known(1);
                } else {
                    x.reset();
                }
                setOutput(ctx, 0, elemTypeOf(ctx, 0), x);
            });
        onnx::RegisterSchema(std::move(s));
    }
}

void registerQLinearSoftmaxAndConcat() {
    {
        auto s = schema("QLinearSoftmax", kMicrosoftDomain, __LINE__);
        s.Attr("axis", "", AP::INT, false)
            .Attr("opset", "", AP::INT, true)
            .Input(0, "X", "", "T")
            .Input(1, "X_scale", "", "tensor(float)")
            .Input(2, "x_zero_point", "", "T", kOptional)
            .Input(3, "y_scale", "", "tensor(float)")
            .Input(4, "y_zero_point", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", int8Types(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("QLinearConcat", kMicrosoftDomain, __LINE__);
        s.Attr("axis", "", AP::INT, true)
            .Input(0, "Y_scale", "", "TF")
            .Input(1, "Y_zero_point", "", "T8")
            .Input(2, "inputs", "", "TV", kVariadic, false)
            .Output(0, "Y", "", "T8")
            .TypeConstraint("TF", {"tensor(float)"}, "")
            .TypeConstraint("T8", int8Types(), "")
            .TypeConstraint("TV", {"tensor(float)", "tensor(int8)", "tensor(uint8)"}, "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                // Inputs 2, 5, 8, ... are the tensors (each followed by its scale and zero point).
                std::optional<Dims> out;
                std::int64_t axis = intAttribute(ctx, "axis", 0);
                bool ok = ctx.getNumInputs() >= 3;
                for (std::size_t i = 2; ok && i < ctx.getNumInputs(); i += 3) {
                    const auto x = shapeOf(ctx, i);
                    if (!x || x->empty() || (out && out->size() != x->size())) {
                        ok = false;
                        break;
                    }
                    const auto rank = static_cast<std::int64_t>(x->size());
                    const std::int64_t a = axis < 0 ? axis + rank : axis;
                    if (a < 0 || a >= rank) fail_shape_inference("axis out of range");
                    if (!out) {
                        out = *x;
                        continue;
                    }
                    for (std::int64_t k = 0; k < rank; ++k) {
                        if (k == a)
                            (*out)[k] = sum((*out)[k], (*x)[k]);
                        else if (!sameDim((*out)[k], (*x)[k]))
                            (*out)[k] = (*out)[k].has_dim_value() ? (*out)[k] : (*x)[k];
                    }
                }
                setOutput(ctx, 0, elemTypeOf(ctx, 1), ok ? out : std::nullopt);
            });
        onnx::RegisterSchema(std::move(s));
    }
}

}  // namespace

void registerMicrosoftQuantizationSchemas() {
    registerProducts();
    registerGatherBlockQuantized();
    registerDynamicQuantizeLstm();
    registerQLinearBinary("QLinearAdd", __LINE__);
    registerQLinearBinary("QLinearMul", __LINE__);
    registerQLinearUnary("QLinearSigmoid", false, __LINE__);
    registerQLinearUnary("QLinearLeakyRelu", true, __LINE__);
    registerQLinearPools();
    registerQLinearSoftmaxAndConcat();
}

}  // namespace onnxlens::ms
