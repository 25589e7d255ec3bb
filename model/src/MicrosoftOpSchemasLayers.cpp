// Schemas of ONNX Runtime's normalisations, activations and fused products (FusedConv,
// FusedGemm, FusedMatMul: what its `extended` optimization level saves) (com.microsoft,
// version 1) and of its default-domain LayerNormalization / SimplifiedLayerNormalization
// extensions, after ContribOperators.md. Inputs, outputs, attributes and type constraints as
// documented; output shapes as the operators define them.
#include <onnx/defs/shape_inference.h>

#include <utility>

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
    onnx::RegisterSchema(geluSchema(kMicrosoftDomain));
    onnx::RegisterSchema(quickGeluSchema(kMicrosoftDomain));
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

// FusedMatMul: MatMul's output after the operands' transposes. transBatch moves an operand's
// first dim behind its batch dims ([d0, b..., k] read as [b..., d0, k]; same rank >= 3 for
// both); trans swaps its last two dims (rank >= 2). Unknown (no shape) where the ranks do not
// allow it or the inner dims are known and differ.
void inferFusedMatMul(onnx::InferenceContext& ctx) {
    const int type = elemTypeOf(ctx, 0);
    auto a = shapeOf(ctx, 0), b = shapeOf(ctx, 1);
    const bool batchA = intAttribute(ctx, "transBatchA", 0) != 0,
               batchB = intAttribute(ctx, "transBatchB", 0) != 0;
    auto arrange = [](Dims& d, bool batchFirst, bool transposed) {
        const std::size_t r = d.size();
        if (batchFirst) {
            Dim first = d[0];
            for (std::size_t i = 0; i + 2 < r; ++i) d[i] = d[i + 1];
            d[r - 2] = first;
        }
        if (transposed && r >= 2) std::swap(d[r - 1], d[r - 2]);
    };
    if (!a || !b || a->empty() || b->empty() ||
        ((batchA || batchB) && (a->size() < 3 || a->size() != b->size()))) {
        setOutput(ctx, 0, type, std::nullopt);
        return;
    }
    arrange(*a, batchA, intAttribute(ctx, "transA", 0) != 0);
    arrange(*b, batchB, intAttribute(ctx, "transB", 0) != 0);
    const bool vectorA = a->size() == 1, vectorB = b->size() == 1;
    if (vectorA) a->insert(a->begin(), known(1));
    if (vectorB) b->push_back(known(1));
    const Dim& ka = (*a)[a->size() - 1];
    const Dim& kb = (*b)[b->size() - 2];
    if (ka.has_dim_value() && kb.has_dim_value() && ka.dim_value() != kb.dim_value()) {
        setOutput(ctx, 0, type, std::nullopt);
        return;
    }
    onnx::TensorShapeProto batchOfA, batchOfB, batch;
    for (std::size_t i = 0; i + 2 < a->size(); ++i) *batchOfA.add_dim() = (*a)[i];
    for (std::size_t i = 0; i + 2 < b->size(); ++i) *batchOfB.add_dim() = (*b)[i];
    onnx::bidirectionalBroadcastShapeInference(batchOfA, batchOfB, batch);
    Dims y(batch.dim().begin(), batch.dim().end());
    if (!vectorA) y.push_back((*a)[a->size() - 2]);
    if (!vectorB) y.push_back(b->back());
    setOutput(ctx, 0, type, y);
}

void registerFusedProducts() {
    onnx::RegisterSchema(fusedConvSchema(kMicrosoftDomain));
    {
        auto s = schema("FusedGemm", kMicrosoftDomain, __LINE__);
        s.Attr("transA", "", AP::INT, false)
            .Attr("transB", "", AP::INT, false)
            .Attr("alpha", "", AP::FLOAT, false)
            .Attr("beta", "", AP::FLOAT, false)
            .Attr("activation", "", AP::STRING, false)
            .Attr("activation_alpha", "", AP::FLOAT, false)
            .Attr("activation_beta", "", AP::FLOAT, false)
            .Attr("activation_gamma", "", AP::FLOAT, false)
            .Input(0, "A", "", "T")
            .Input(1, "B", "", "T")
            .Input(2, "C", "", "T", kOptional)
            .Output(0, "Y", "", "T")
            .TypeConstraint("T",
                            {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(uint32)",
                             "tensor(uint64)", "tensor(int32)", "tensor(int64)"},
                            "")
            .TypeAndShapeInferenceFunction(inferAs("Gemm", 13));
        onnx::RegisterSchema(std::move(s));
    }
    {
        auto s = schema("FusedMatMul", kMicrosoftDomain, __LINE__);
        s.Attr("alpha", "", AP::FLOAT, false)
            .Attr("transA", "", AP::INT, false)
            .Attr("transB", "", AP::INT, false)
            .Attr("transBatchA", "", AP::INT, false)
            .Attr("transBatchB", "", AP::INT, false)
            .Input(0, "A", "", "T")
            .Input(1, "B", "", "T")
            .Output(0, "Y", "", "T")
            .TypeConstraint("T", floatTypesDouble(), "")
            .TypeAndShapeInferenceFunction(inferFusedMatMul);
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

onnx::OpSchema geluSchema(const char* domain) {
    auto s = schema("Gelu", domain, __LINE__);
    s.Input(0, "X", "", "T")
        .Output(0, "Y", "", "T")
        .TypeConstraint("T", floatTypesDouble(), "")
        .TypeAndShapeInferenceFunction(sameAsFirstInput);
    return s;
}

onnx::OpSchema quickGeluSchema(const char* domain) {
    auto s = schema("QuickGelu", domain, __LINE__);
    s.Attr("alpha", "", AP::FLOAT, false)
        .Input(0, "X", "", "T")
        .Output(0, "Y", "", "T")
        .TypeConstraint("T", floatTypesDouble(), "")
        .TypeAndShapeInferenceFunction(sameAsFirstInput);
    return s;
}

onnx::OpSchema fusedConvSchema(const char* domain) {
    auto s = schema("FusedConv", domain, __LINE__);
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
        .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
        .TypeAndShapeInferenceFunction(inferAs("Conv", 11));
    return s;
}

void registerMicrosoftLayerSchemas() {
    registerSkipNormalizations();
    registerEmbedLayerNormalization();
    registerActivations();
    registerFusedProducts();
    registerOrtOnnxDomainExtensions();
}

}  // namespace onnxlens::ms
