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
#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::ms {

namespace {

using AP = onnx::AttributeProto;
constexpr auto kOptional = onnx::OpSchema::Optional;

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
            .TypeAndShapeInferenceFunction(inferAs("MatMul", 13));
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = matMulIntegerToFloatSchema(kOnnxlensDomain);
        s.Attr("activation", "", AP::STRING, false);
        onnx::RegisterSchema(std::move(s));
    }
    onnx::RegisterSchema(fusedConvSchema(kOnnxlensDomain));
    {
        // com.microsoft's Attention with its weights input holding the packed copy; k and n
        // are that product's K and N.
        auto s = attentionSchema(kOnnxlensDomain);
        s.Attr("k", "", AP::INT, true)
            .Attr("n", "", AP::INT, true)
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
    onnx::RegisterSchema(geluSchema(kOnnxlensDomain));
    onnx::RegisterSchema(quickGeluSchema(kOnnxlensDomain));
}

}  // namespace

void registerOnnxlensOptimizerSchemas() {
    registerProducts();
    registerElementwise();
}

}  // namespace onnxlens::ms
