// Schemas of the com.onnxlens operators the engine's optimizer writes into a saved optimized model
// (`onnxlens-cli optimize`, the window's "save optimized"): what each takes and what its output's
// type and shape are, so that such a model's edges are shaped, its costs counted, and `check`
// checks these nodes as it checks com.microsoft's. Only the operators whose outputs keep a plain
// layout are here; the channel-blocked ones (BlockedConv, ReorderToBlocked, ...) and the
// channels-last int8 convolution write layouts of the engine's own and stay unchecked and
// unshaped (their costs say unknown).
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "MicrosoftOpSchemaSupport.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"

namespace onnxlens::ms {

namespace {

using AP = onnx::AttributeProto;
constexpr auto kOptional = onnx::OpSchema::Optional;
constexpr const char* kOnnxlensDomain = "com.onnxlens";

// Output 0 as the schema `op` of `domain` infers it (the same inputs in the same places).
onnx::InferenceFunction inferAsSchema(const char* op, int version, const char* domain) {
    return [op, version, domain](onnx::InferenceContext& ctx) {
        const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version, domain);
        if (s && s->GetTypeAndShapeInferenceFunction()) s->GetTypeAndShapeInferenceFunction()(ctx);
    };
}

// PackedMatMul: Y [..., N] = A [..., K] x B, B packed in the engine's blocked layout; k and n
// are the product's K and N.
void inferPackedMatMul(onnx::InferenceContext& ctx) {
    const std::int64_t n = intAttribute(ctx, "n", 0);
    auto dims = shapeOf(ctx, 0);
    if (dims && (dims->empty() || n < 1)) dims.reset();
    if (dims) dims->back() = known(n);
    setOutput(ctx, 0, elemTypeOf(ctx, 0), dims);
}

// The packed Attention: com.microsoft Attention with its weights packed; n is Q, K and V's
// hidden sizes together, so the output's hidden size is V's: qkv_hidden_sizes[2], else n / 3.
void inferPackedAttention(onnx::InferenceContext& ctx) {
    auto dims = shapeOf(ctx, 0, 3);
    if (dims) {
        std::int64_t vHidden = 0;
        const auto* sizes = ctx.getAttribute("qkv_hidden_sizes");
        if (sizes && sizes->ints_size() == 3) {
            vHidden = sizes->ints(2);
        } else {
            const std::int64_t n = intAttribute(ctx, "n", 0);
            vHidden = n > 0 && n % 3 == 0 ? n / 3 : 0;
        }
        if (vHidden > 0)
            (*dims)[2] = known(vHidden);
        else
            dims.reset();
    }
    setOutput(ctx, 0, elemTypeOf(ctx, 0), dims);
}

void registerProducts() {
    {
        auto s = schema("PackedMatMul", kOnnxlensDomain, __LINE__);
        s.Attr("k", "", AP::INT, true)
            .Attr("n", "", AP::INT, true)
            .Attr("activation", "", AP::STRING, false)
            .Input(0, "A", "", "T")
            .Input(1, "packed_B", "", "T")
            .Input(2, "bias", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", {"tensor(float)"}, "")
            .TypeAndShapeInferenceFunction(inferPackedMatMul);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("FusedMatMul", kOnnxlensDomain, __LINE__);
        s.Attr("activation", "", AP::STRING, false)
            .Input(0, "A", "", "T")
            .Input(1, "B", "", "T")
            .Input(2, "bias", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(inferAsSchema("MatMul", 13, ""));
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("MatMulIntegerToFloat", kOnnxlensDomain, __LINE__);
        s.Attr("activation", "", AP::STRING, false)
            .Input(0, "A", "", "T1")
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
            .TypeAndShapeInferenceFunction(
                inferAsSchema("MatMulIntegerToFloat", 1, kMicrosoftDomain));
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("FusedConv", kOnnxlensDomain, __LINE__);
        s.Attr("auto_pad", "", AP::STRING, false)
            .Attr("kernel_shape", "", AP::INTS, false)
            .Attr("dilations", "", AP::INTS, false)
            .Attr("strides", "", AP::INTS, false)
            .Attr("pads", "", AP::INTS, false)
            .Attr("group", "", AP::INT, false)
            .Attr("activation", "", AP::STRING, false)
            .Attr("activation_params", "", AP::FLOATS, false)
            .Input(0, "X", "", "T")
            .Input(1, "W", "", "T")
            .Input(2, "B", "", "T", kOptional)
            .Input(3, "Z", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(inferAsSchema("Conv", 11, ""));
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("Attention", kOnnxlensDomain, __LINE__);
        s.Attr("k", "", AP::INT, true)
            .Attr("n", "", AP::INT, true)
            .Attr("do_rotary", "", AP::INT, false)
            .Attr("mask_filter_value", "", AP::FLOAT, false)
            .Attr("num_heads", "", AP::INT, true)
            .Attr("past_present_share_buffer", "", AP::INT, false)
            .Attr("qkv_hidden_sizes", "", AP::INTS, false)
            .Attr("rotary_embedding_dim", "", AP::INT, false)
            .Attr("scale", "", AP::FLOAT, false)
            .Attr("unidirectional", "", AP::INT, false)
            .Input(0, "input", "", "T")
            .Input(1, "packed_weights", "", "T")
            .Input(2, "bias", "", "T", kOptional)
            .Input(3, "mask_index", "", "M", kOptional)
            .Input(4, "past", "", "T", kOptional)
            .Input(5, "attention_bias", "", "T", kOptional)
            .Input(6, "past_sequence_length", "", "M", kOptional)
            .Output(0, "output", "", "T")
            .Output(1, "present", "", "T", kOptional)
            .TypeConstraint("T", {"tensor(float)"}, "")
            .TypeConstraint("M", {"tensor(int32)"}, "")
            .TypeAndShapeInferenceFunction(inferPackedAttention);
        onnx::RegisterSchema(std::move(s));
    }
}

void registerElementwise() {
    {
        auto s = schema("LayerNormalization", kOnnxlensDomain, __LINE__);
        s.Attr("axis", "", AP::INT, false)
            .Attr("epsilon", "", AP::FLOAT, false)
            .Input(0, "X", "", "T")
            .Input(1, "Scale", "", "T")
            .Input(2, "B", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("Gelu", kOnnxlensDomain, __LINE__);
        s.Input(0, "X", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("QuickGelu", kOnnxlensDomain, __LINE__);
        s.Attr("alpha", "", AP::FLOAT, false)
            .Input(0, "X", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
}

}  // namespace

void registerOnnxlensOptimizerSchemas() {
    registerProducts();
    registerElementwise();
}

}  // namespace onnxlens::ms
