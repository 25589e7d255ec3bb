// Schemas of ONNX Runtime's attention operators (com.microsoft, version 1) after
// ContribOperators.md: Attention, MultiHeadAttention, GroupQueryAttention, QAttention and
// RotaryEmbedding. Output shapes keep the symbolic dims of their inputs; a present key/value
// whose length is past + new gets "past + new" (a number when both are), except where the
// buffer may be shared with the past (then only a constant length or the declared output names
// it).
#include "MicrosoftOpSchemaSupport.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"

namespace onnxlens::ms {

namespace {

using AP = onnx::AttributeProto;
constexpr auto kOptional = onnx::OpSchema::Optional;

// Whether optional input `i` is surely absent: beyond the node's inputs. (An empty name and an
// untyped value look the same to an inference function; those stay undecided.)
bool absent(onnx::InferenceContext& ctx, std::size_t i) { return i >= ctx.getNumInputs(); }

// A head count attribute, 0 when absent or beyond any real model (so sums of them cannot
// overflow).
std::int64_t headCount(onnx::InferenceContext& ctx, const char* name) {
    const std::int64_t heads = intAttribute(ctx, name, 0);
    return heads > 0 && heads <= (std::int64_t{1} << 20) ? heads : 0;
}

// The packed-QKV Attention and QAttention: input [B, S, Hin] x weights [Hin, Hq + Hk + Hv];
// output [B, S, Hv]; present [2, B, N, P + S, head] from past [2, B, N, P, head].
void packedAttentionShapes(onnx::InferenceContext& ctx, std::size_t weightsIndex,
                           std::size_t pastIndex, int elemType) {
    const auto input = shapeOf(ctx, 0, 3);
    const auto weights = shapeOf(ctx, weightsIndex, 2);
    const std::int64_t heads = headCount(ctx, "num_heads");
    Dim qHidden = unknown(), vHidden = unknown();
    if (const auto* sizes = ctx.getAttribute("qkv_hidden_sizes");
        sizes && sizes->ints_size() == 3) {
        if (sizes->ints(0) > 0) qHidden = known(sizes->ints(0));
        if (sizes->ints(2) > 0) vHidden = known(sizes->ints(2));
    } else if (weights) {
        qHidden = dividedBy((*weights)[1], 3);
        vHidden = qHidden;
    }
    std::optional<Dims> out;
    if (input) out = Dims{(*input)[0], (*input)[1], vHidden};
    setOutput(ctx, 0, elemType, out);
    if (!hasOutput(ctx, 1)) return;
    std::optional<Dims> present;
    const bool shared = intAttribute(ctx, "past_present_share_buffer", 0) != 0;
    if (const auto past = shapeOf(ctx, pastIndex, 5)) {
        present = *past;
        if (!shared) (*present)[3] = input ? sum((*past)[3], (*input)[1]) : unknown();
    } else if (absent(ctx, pastIndex) && input) {
        present = Dims{known(2), (*input)[0], heads > 0 ? known(heads) : unknown(), (*input)[1],
                       dividedBy(qHidden, heads)};
    }
    setOutput(ctx, 1, elemType, present);
}

}  // namespace

onnx::OpSchema attentionSchema(const char* domain) {
    auto s = schema("Attention", domain, __LINE__);
    s.Attr("do_rotary", "", AP::INT, false)
        .Attr("mask_filter_value", "", AP::FLOAT, false)
        .Attr("num_heads", "", AP::INT, true)
        .Attr("past_present_share_buffer", "", AP::INT, false)
        .Attr("qkv_hidden_sizes", "", AP::INTS, false)
        .Attr("rotary_embedding_dim", "", AP::INT, false)
        .Attr("scale", "", AP::FLOAT, false)
        .Attr("unidirectional", "", AP::INT, false)
        .Input(0, "input", "", "T")
        .Input(1, "weights", "", "T")
        .Input(2, "bias", "", "T", kOptional)
        .Input(3, "mask_index", "", "M", kOptional)
        .Input(4, "past", "", "T", kOptional)
        .Input(5, "attention_bias", "", "T", kOptional)
        .Input(6, "past_sequence_length", "", "M", kOptional)
        .Output(0, "output", "", "T")
        .Output(1, "present", "", "T", kOptional)
        .TypeConstraint("T", floatTypes(), "")
        .TypeConstraint("M", {"tensor(int32)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            packedAttentionShapes(ctx, 1, 4, elemTypeOf(ctx, 0));
        });
    return s;
}

namespace {

void registerAttention() { onnx::RegisterSchema(attentionSchema(kMicrosoftDomain)); }

void registerQAttention() {
    auto s = schema("QAttention", kMicrosoftDomain, __LINE__);
    s.Attr("do_rotary", "", AP::INT, false)
        .Attr("mask_filter_value", "", AP::FLOAT, false)
        .Attr("num_heads", "", AP::INT, true)
        .Attr("past_present_share_buffer", "", AP::INT, false)
        .Attr("scale", "", AP::FLOAT, false)
        .Attr("unidirectional", "", AP::INT, false)
        .Input(0, "input", "", "T1")
        .Input(1, "weight", "", "T2")
        .Input(2, "bias", "", "T3")
        .Input(3, "input_scale", "", "T3")
        .Input(4, "weight_scale", "", "T3")
        .Input(5, "mask_index", "", "T4", kOptional)
        .Input(6, "input_zero_point", "", "T1", kOptional)
        .Input(7, "weight_zero_point", "", "T2", kOptional)
        .Input(8, "past", "", "T3", kOptional)
        .Output(0, "output", "", "T3")
        .Output(1, "present", "", "T3", kOptional)
        .TypeConstraint("T1", int8Types(), "")
        .TypeConstraint("T2", int8Types(), "")
        .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "")
        .TypeConstraint("T4", {"tensor(int32)"}, "")
        .TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
            packedAttentionShapes(ctx, 1, 8, elemTypeOf(ctx, 2));
        });
    onnx::RegisterSchema(std::move(s));
}

// MultiHeadAttention: query [B, S, D] (or packed QKV [B, S, N, 3, H]); key [B, L, D], packed KV
// [B, L, N, 2, H] or a BNSH key [B, N, L, H]; value [B, L, Dv] or BNSH [B, N, L, H].
void multiHeadAttentionShapes(onnx::InferenceContext& ctx) {
    const int t = elemTypeOf(ctx, 0);
    const std::int64_t heads = headCount(ctx, "num_heads");
    const auto query = shapeOf(ctx, 0);
    const auto key = shapeOf(ctx, 1);
    const auto value = shapeOf(ctx, 2);
    if (!query || (query->size() != 3 && query->size() != 5)) {
        setOutput(ctx, 0, t, std::nullopt);
        for (std::size_t o = 1; o < 4; ++o) setOutput(ctx, o, t, std::nullopt);
        return;
    }
    const bool packedQkv = query->size() == 5;
    Dim vHidden = unknown(), head = unknown(), kvLength = unknown();
    bool keyIsBnsh = false;
    if (packedQkv) {
        vHidden = (*query)[4].has_dim_value() ? times((*query)[4], heads) : unknown();
        head = (*query)[4];
        kvLength = (*query)[1];
    } else if (key && key->size() == 5) {
        head = (*key)[4];
        vHidden = times(head, heads);
        kvLength = (*key)[1];
    } else {
        if (value && value->size() == 3) vHidden = (*value)[2];
        if (value && value->size() == 4) vHidden = times((*value)[3], heads);
        if (key && key->size() == 3) {
            kvLength = (*key)[1];
            head = dividedBy((*key)[2], heads);
        } else if (key && key->size() == 4) {
            keyIsBnsh = true;
            kvLength = (*key)[2];
            head = (*key)[3];
        }
    }
    setOutput(ctx, 0, t, Dims{(*query)[0], (*query)[1], vHidden});
    // present_key / present_value: [B, N, P + L, H], or the past's shape when the buffer is
    // shared (past_sequence_length given), or the BNSH key itself.
    std::optional<Dims> present;
    const auto past = shapeOf(ctx, 6, 4);
    if (keyIsBnsh) {
        present = key;
    } else if (past) {
        present = *past;
        if (absent(ctx, 8))
            (*present)[2] = sum((*past)[2], kvLength);
        else if (!shapeOf(ctx, 8))
            (*present)[2] = unknown();
    } else if (absent(ctx, 6)) {
        present = Dims{(*query)[0], heads > 0 ? known(heads) : unknown(), kvLength, head};
    }
    setOutput(ctx, 1, t, present);
    setOutput(ctx, 2, t, present);
    std::optional<Dims> qk;
    if (present)
        qk = Dims{(*query)[0], heads > 0 ? known(heads) : unknown(), (*query)[1], (*present)[2]};
    setOutput(ctx, 3, t, qk);
}

void registerMultiHeadAttention() {
    auto s = schema("MultiHeadAttention", kMicrosoftDomain, __LINE__);
    s.Attr("mask_filter_value", "", AP::FLOAT, false)
        .Attr("num_heads", "", AP::INT, true)
        .Attr("scale", "", AP::FLOAT, false)
        .Attr("unidirectional", "", AP::INT, false)
        .Input(0, "query", "", "T")
        .Input(1, "key", "", "T", kOptional)
        .Input(2, "value", "", "T", kOptional)
        .Input(3, "bias", "", "T", kOptional)
        .Input(4, "key_padding_mask", "", "M", kOptional)
        .Input(5, "attention_bias", "", "T", kOptional)
        .Input(6, "past_key", "", "T", kOptional)
        .Input(7, "past_value", "", "T", kOptional)
        .Input(8, "past_sequence_length", "", "M", kOptional)
        .Input(9, "cache_indirection", "", "M", kOptional)
        .Output(0, "output", "", "T")
        .Output(1, "present_key", "", "T", kOptional)
        .Output(2, "present_value", "", "T", kOptional)
        .Output(3, "qk", "", "QK", kOptional)
        .TypeConstraint("T", floatTypes(), "")
        .TypeConstraint("QK", floatTypes(), "")
        .TypeConstraint("M", {"tensor(int32)"}, "")
        .TypeAndShapeInferenceFunction(multiHeadAttentionShapes);
    onnx::RegisterSchema(std::move(s));
}

// GroupQueryAttention: query [B, S, N * H] with key and value [B, L, Nkv * H], or packed QKV
// [B, S, (N + 2 Nkv) * H]; past_key / past_value [B, Nkv, P, H] (P: the past length, or the
// buffer's capacity when past and present share it, which only the kernel can tell).
void groupQueryAttentionShapes(onnx::InferenceContext& ctx) {
    const int t = elemTypeOf(ctx, 0);
    const std::int64_t heads = headCount(ctx, "num_heads");
    const std::int64_t kvHeads = headCount(ctx, "kv_num_heads");
    const auto query = shapeOf(ctx, 0, 3);
    const auto past = shapeOf(ctx, 3, 4);
    Dim head = past ? (*past)[3] : unknown();
    Dim hidden = unknown();
    if (query) {
        const Dim& d = (*query)[2];
        const bool keyTyped = shapeOf(ctx, 1, 3).has_value();
        if (head.has_dim_value() && d.has_dim_value() && heads > 0) {
            const Dim separate = times(head, heads);
            if (separate.has_dim_value() && separate.dim_value() == d.dim_value())
                hidden = d;
            else if (kvHeads > 0 && times(head, heads + 2 * kvHeads).has_dim_value() &&
                     times(head, heads + 2 * kvHeads).dim_value() == d.dim_value())
                hidden = separate;
        } else if (keyTyped) {
            hidden = d;
            head = dividedBy(d, heads);
        } else if (absent(ctx, 1) && heads > 0 && kvHeads > 0) {
            head = dividedBy(d, heads + 2 * kvHeads);
            hidden = times(head, heads);
        }
        if (!head.has_dim_value() && hidden.has_dim_value()) head = dividedBy(hidden, heads);
    }
    setOutput(ctx, 0, t,
              query ? std::optional<Dims>(Dims{(*query)[0], (*query)[1], hidden}) : std::nullopt);
    // The present length is the past's plus the new tokens, or the shared buffer's capacity:
    // decided from total_sequence_length when it is a constant, else left to a new symbol (or
    // to the name the graph's output declares).
    Dim length = unknown();
    if (const auto total = constantInts(ctx, 6);
        total && total->size() == 1 && past && (*past)[2].has_dim_value())
        length = known(std::max((*total)[0], (*past)[2].dim_value()));
    const int cacheType = elemTypeOf(ctx, 3) != 0 ? elemTypeOf(ctx, 3) : t;
    std::optional<Dims> present;
    if (query || past)
        present =
            Dims{past ? (*past)[0] : (*query)[0],
                 kvHeads > 0 ? known(kvHeads) : (past ? (*past)[1] : unknown()), length, head};
    setOutput(ctx, 1, cacheType, present);
    setOutput(ctx, 2, cacheType, present);
    std::optional<Dims> qk;
    if (query) qk = Dims{(*query)[0], heads > 0 ? known(heads) : unknown(), (*query)[1], length};
    setOutput(ctx, 3, t, qk);
}

void registerGroupQueryAttention() {
    auto s = schema("GroupQueryAttention", kMicrosoftDomain, __LINE__);
    s.Attr("causal", "", AP::INT, false)
        .Attr("do_rotary", "", AP::INT, false)
        .Attr("k_quant_type", "", AP::STRING, false)
        .Attr("kv_cache_bit_width", "", AP::INT, false)
        .Attr("kv_num_heads", "", AP::INT, true)
        .Attr("local_window_size", "", AP::INT, false)
        .Attr("num_heads", "", AP::INT, true)
        .Attr("qk_norm_epsilon", "", AP::FLOAT, false)
        .Attr("qk_output", "", AP::INT, false)
        .Attr("rotary_interleaved", "", AP::INT, false)
        .Attr("scale", "", AP::FLOAT, false)
        .Attr("sliding_window_cache", "", AP::INT, false)
        .Attr("smooth_softmax", "", AP::INT, false)
        .Attr("softcap", "", AP::FLOAT, false)
        .Attr("v_quant_type", "", AP::STRING, false)
        .Input(0, "query", "", "T")
        .Input(1, "key", "", "T", kOptional)
        .Input(2, "value", "", "T", kOptional)
        .Input(3, "past_key", "", "T_CACHE", kOptional)
        .Input(4, "past_value", "", "T_CACHE", kOptional)
        .Input(5, "seqlens_k", "", "M")
        .Input(6, "total_sequence_length", "", "M")
        .Input(7, "cos_cache", "", "T", kOptional)
        .Input(8, "sin_cache", "", "T", kOptional)
        .Input(9, "position_ids", "", "tensor(int64)", kOptional)
        .Input(10, "attention_bias", "", "T", kOptional)
        .Input(11, "head_sink", "", "T", kOptional)
        .Input(12, "k_scale", "", "T_KV_SCALE", kOptional)
        .Input(13, "v_scale", "", "T_KV_SCALE", kOptional)
        .Input(14, "q_norm_weight", "", "T", kOptional)
        .Input(15, "k_norm_weight", "", "T", kOptional)
        .Output(0, "output", "", "T")
        .Output(1, "present_key", "", "T_CACHE", kOptional)
        .Output(2, "present_value", "", "T_CACHE", kOptional)
        .Output(3, "output_qk", "", "T", kOptional)
        .TypeConstraint("T", floatTypes(), "")
        .TypeConstraint("T_CACHE",
                        {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(uint8)",
                         "tensor(int8)"},
                        "")
        .TypeConstraint("T_KV_SCALE", {"tensor(float)"}, "")
        .TypeConstraint("M", {"tensor(int32)"}, "")
        .TypeAndShapeInferenceFunction(groupQueryAttentionShapes);
    onnx::RegisterSchema(std::move(s));
}

void registerRotaryEmbedding() {
    auto s = schema("RotaryEmbedding", kMicrosoftDomain, __LINE__);
    s.Attr("interleaved", "", AP::INT, false)
        .Attr("is_packed_batching", "", AP::INT, false)
        .Attr("num_heads", "", AP::INT, false)
        .Attr("rotary_embedding_dim", "", AP::INT, false)
        .Attr("scale", "", AP::FLOAT, false)
        .Input(0, "input", "", "T")
        .Input(1, "position_ids", "", "M")
        .Input(2, "cos_cache", "", "T")
        .Input(3, "sin_cache", "", "T")
        .Output(0, "output", "", "T")
        .TypeConstraint("T", floatTypes(), "")
        .TypeConstraint("M", {"tensor(int64)"}, "")
        .TypeAndShapeInferenceFunction(sameAsFirstInput);
    onnx::RegisterSchema(std::move(s));
}

}  // namespace

void registerMicrosoftAttentionSchemas() {
    registerAttention();
    registerQAttention();
    registerMultiHeadAttention();
    registerGroupQueryAttention();
    registerRotaryEmbedding();
}

}  // namespace onnxlens::ms
