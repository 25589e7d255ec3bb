// Schemas of ONNX Runtime's normalisations and activations (com.microsoft, version 1) and of its
// default-domain LayerNormalization / SimplifiedLayerNormalization extensions, after
// ContribOperators.md. Inputs, outputs, attributes and type constraints as documented; output
// shapes as the operators define them.
#include "MicrosoftOpSchemaSupport.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"

namespace onnxlens::ms {

namespace {

using AP = onnx::AttributeProto;
constexpr auto kOptional = onnx::OpSchema::Optional;

// Y like X; mean / inverse standard deviation outputs (at `statsFrom`) of X's shape with the
// normalised axes (from `axis`) set to 1, in float.
void normalisationOutputs(onnx::InferenceContext& ctx, std::size_t statsFrom, std::size_t statsTo,
                          std::int64_t axis, int yType) {
    const auto x = shapeOf(ctx, 0);
    setOutput(ctx, 0, yType, x);
    std::optional<Dims> stats;
    if (x) {
        const auto rank = static_cast<std::int64_t>(x->size());
        if (axis < 0) axis += rank;
        if (axis >= 0 && axis < rank) {
            stats = *x;
            for (std::int64_t k = axis; k < rank; ++k) (*stats)[k] = known(1);
        }
    }
    for (std::size_t o = statsFrom; o <= statsTo; ++o)
        setOutput(ctx, o, onnx::TensorProto::FLOAT, stats);
}

void registerSkipNormalizations() {
    for (const bool simplified : {false, true}) {
        auto s = schema(simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization",
                        kMicrosoftDomain, __LINE__);
        s.Attr("epsilon", "", AP::FLOAT, false)
            .Input(0, "input", "", "T")
            .Input(1, "skip", "", "T")
            .Input(2, "gamma", "", "T");
        int next = 3;
        if (!simplified) s.Input(next++, "beta", "", "T", kOptional);
        s.Input(next, "bias", "", "T", kOptional)
            .Output(0, "output", "", "T")
            .Output(1, "mean", "", "U", kOptional)
            .Output(2, "inv_std_var", "", "U", kOptional)
            .Output(3, "input_skip_bias_sum", "", "T", kOptional)
            .TypeConstraint("T", floatTypes(), "")
            .TypeConstraint("U", {"tensor(float)"}, "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                normalisationOutputs(ctx, 1, 2, -1, elemTypeOf(ctx, 0));
                setOutput(ctx, 3, elemTypeOf(ctx, 0), shapeOf(ctx, 0));
            });
        onnx::RegisterSchema(std::move(s));
    }
}

void registerEmbedLayerNormalization() {
    auto s = schema("EmbedLayerNormalization", kMicrosoftDomain, __LINE__);
    s.Attr("epsilon", "", AP::FLOAT, false)
        .Attr("mask_index_type", "", AP::INT, false)
        .Input(0, "input_ids", "", "T1")
        .Input(1, "segment_ids", "", "T1", kOptional)
        .Input(2, "word_embedding", "", "T")
        .Input(3, "position_embedding", "", "T")
        .Input(4, "segment_embedding", "", "T", kOptional)
        .Input(5, "gamma", "", "T")
        .Input(6, "beta", "", "T")
        .Input(7, "mask", "", "T1", kOptional)
        .Input(8, "position_ids", "", "T1", kOptional)
        .Output(0, "output", "", "T")
        .Output(1, "mask_index", "", "T1", kOptional)
        .Output(2, "embedding_sum", "", "T", kOptional)
        .TypeConstraint("T1", {"tensor(int32)"}, "")
        .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            const int t = elemTypeOf(ctx, 2);
            const auto ids = shapeOf(ctx, 0, 2);
            const auto word = shapeOf(ctx, 2, 2);
            std::optional<Dims> out;
            if (ids) out = Dims{(*ids)[0], (*ids)[1], word ? (*word)[1] : unknown()};
            setOutput(ctx, 0, t, out);
            setOutput(ctx, 2, t, out);
            setOutput(ctx, 1, onnx::TensorProto::INT32,
                      ids ? std::optional<Dims>(Dims{(*ids)[0]}) : std::nullopt);
        });
    onnx::RegisterSchema(std::move(s));
}

void registerActivations() {
    {
        auto s = schema("BiasGelu", kMicrosoftDomain, __LINE__);
        s.Input(0, "A", "", "T")
            .Input(1, "B", "", "T")
            .Output(0, "C", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("FastGelu", kMicrosoftDomain, __LINE__);
        s.Input(0, "X", "", "T")
            .Input(1, "bias", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypes(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("Gelu", kMicrosoftDomain, __LINE__);
        s.Input(0, "X", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("QuickGelu", kMicrosoftDomain, __LINE__);
        s.Attr("alpha", "", AP::FLOAT, false)
            .Input(0, "X", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("BiasAdd", kMicrosoftDomain, __LINE__);
        s.Input(0, "X", "", "T")
            .Input(1, "bias", "", "T")
            .Input(2, "skip", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypes(), "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("BiasSplitGelu", kMicrosoftDomain, __LINE__);
        s.Input(0, "X", "", "T")
            .Input(1, "bias", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypes(), "")
            .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
                auto x = shapeOf(ctx, 0, 3);
                if (x) (*x)[2] = dividedBy((*x)[2], 2);
                setOutput(ctx, 0, elemTypeOf(ctx, 0), x);
            });
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("GroupNorm", kMicrosoftDomain, __LINE__);
        s.Attr("activation", "", AP::INT, true)
            .Attr("channels_last", "", AP::INT, false)
            .Attr("epsilon", "", AP::FLOAT, false)
            .Attr("groups", "", AP::INT, true)
            .Input(0, "X", "", "T")
            .Input(1, "gamma", "", "M")
            .Input(2, "beta", "", "M")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(bfloat16)"}, "")
            .TypeConstraint("M", {"tensor(float16)", "tensor(float)", "tensor(bfloat16)"}, "")
            .TypeAndShapeInferenceFunction(sameAsFirstInput);
        onnx::RegisterSchema(std::move(s));
    }
}

// ONNX Runtime's default-domain LayerNormalization (version 1, before ONNX's own at opset 17)
// and SimplifiedLayerNormalization, registered in the placeholder domain the library copies
// move them to (MicrosoftOpSchemas.h).
void registerOrtOnnxDomainExtensions() {
    for (const bool simplified : {false, true}) {
        auto s = schema(simplified ? "SimplifiedLayerNormalization" : "LayerNormalization",
                        kOrtOnnxDomainPlaceholder, __LINE__);
        s.Attr("axis", "", AP::INT, false)
            .Attr("epsilon", "", AP::FLOAT, false)
            .Attr("stash_type", "", AP::INT, false)
            .Input(0, "X", "", "T")
            .Input(1, "scale", "", "V");
        if (!simplified) s.Input(2, "B", "", "V", kOptional);
        s.Output(0, "Y", "", "V");
        if (!simplified) s.Output(1, "mean", "", "U", kOptional);
        s.Output(simplified ? 1 : 2, "inv_std_var", "", "U", kOptional)
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeConstraint("U", {"tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "")
            .TypeConstraint("V", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction([simplified](onnx::InferenceContext& ctx) {
                const int y = elemTypeOf(ctx, 1) != 0 ? elemTypeOf(ctx, 1) : elemTypeOf(ctx, 0);
                normalisationOutputs(ctx, 1, simplified ? 1 : 2, intAttribute(ctx, "axis", -1), y);
            });
        onnx::RegisterSchema(std::move(s));
    }
}

}  // namespace

void registerMicrosoftLayerSchemas() {
    registerSkipNormalizations();
    registerEmbedLayerNormalization();
    registerActivations();
    registerOrtOnnxDomainExtensions();
}

}  // namespace onnxlens::ms
