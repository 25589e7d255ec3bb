#pragma once
// Valid input templates for the structure-aware operator cases (OperatorCases.h): per operator,
// attributes and inputs (element type, shape, and where the values matter, the values) that the
// kernel accepts and runs. A hostile case starts from one and changes one thing (an attribute, or
// an input's shape, values, type or presence), so the hostile value reaches the code past the
// kernel's first shape check: the head split, the block loops, the rotary tables, the cache
// indexing. Generic hostile shapes alone are refused by that first check.
// `OperatorTemplates.EachTemplateRunsWithItsOwnAttributes` (tests/engine/HostileAttributesTest.cpp)
// checks that every template here runs.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::testing {

struct TemplateAttribute {
    std::string name;
    onnx::AttributeProto::AttributeType type = onnx::AttributeProto::INT;
    std::int64_t i = 0;
    float f = 0.0f;
    std::vector<std::int64_t> ints;
    std::string s;  // STRING attributes
};

inline TemplateAttribute intAttr(std::string name, std::int64_t v) {
    return {std::move(name), onnx::AttributeProto::INT, v, 0.0f, {}, {}};
}
inline TemplateAttribute intsAttr(std::string name, std::vector<std::int64_t> v) {
    return {std::move(name), onnx::AttributeProto::INTS, 0, 0.0f, std::move(v), {}};
}
inline TemplateAttribute stringAttr(std::string name, std::string v) {
    return {std::move(name), onnx::AttributeProto::STRING, 0, 0.0f, {}, std::move(v)};
}

struct TemplateInput {
    onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT;
    engine::Shape shape;
    // Cycled over the tensor's elements (one value fills it); empty: small generated values
    // (floats in -2..2, integers 0..2).
    std::vector<double> values;
    // An optional input the template leaves out (its name empty); a perturbation can feed it
    // with the type, shape and values above.
    bool absent = false;
};

struct OperatorTemplate {
    std::string domain;  // "" for the default domain
    std::string opType;
    std::string variant;  // tells the templates of one operator apart in labels and test names
    std::vector<TemplateAttribute> attributes;
    std::vector<TemplateInput> inputs;
};

namespace templates {
constexpr auto F = onnx::TensorProto::FLOAT;
constexpr auto U8 = onnx::TensorProto::UINT8;
constexpr auto I8 = onnx::TensorProto::INT8;
constexpr auto I32 = onnx::TensorProto::INT32;
constexpr auto I64 = onnx::TensorProto::INT64;

inline TemplateInput in(onnx::TensorProto::DataType type, engine::Shape shape,
                        std::vector<double> values = {}) {
    return {type, std::move(shape), std::move(values), false};
}
inline TemplateInput absentIn(onnx::TensorProto::DataType type, engine::Shape shape,
                              std::vector<double> values = {}) {
    return {type, std::move(shape), std::move(values), true};
}
// A positive quantization scale.
inline TemplateInput scale(engine::Shape shape = {}) { return in(F, std::move(shape), {0.05}); }

// GroupQueryAttention: batch 1, 2 new tokens, 2 query heads over 1 key/value head of size 4,
// a past of 2 (total 4); packed QKV puts query, key and value in one [1, 2, 16] input.
inline OperatorTemplate groupQueryAttention(bool packed, bool rotary) {
    const std::string ms = "com.microsoft";
    OperatorTemplate t{ms,
                       "GroupQueryAttention",
                       std::string(packed ? "packed" : "separate") + (rotary ? "_rotary" : ""),
                       {intAttr("num_heads", 2), intAttr("kv_num_heads", 1)},
                       {}};
    if (rotary) t.attributes.push_back(intAttr("do_rotary", 1));
    if (packed) {
        t.inputs = {in(F, {1, 2, 16}), absentIn(F, {1, 2, 4}), absentIn(F, {1, 2, 4})};
    } else {
        t.inputs = {in(F, {1, 2, 8}), in(F, {1, 2, 4}), in(F, {1, 2, 4})};
    }
    t.inputs.push_back(in(F, {1, 1, 2, 4}));  // past_key
    t.inputs.push_back(in(F, {1, 1, 2, 4}));  // past_value
    t.inputs.push_back(in(I32, {1}, {3}));    // seqlens_k: total - 1
    t.inputs.push_back(in(I32, {}, {4}));     // total_sequence_length
    // cos_cache, sin_cache: 4 positions, rotary half-dim 2
    t.inputs.push_back(rotary ? in(F, {4, 2}) : absentIn(F, {4, 2}));
    t.inputs.push_back(rotary ? in(F, {4, 2}) : absentIn(F, {4, 2}));
    t.inputs.push_back(absentIn(I64, {1, 2}, {2, 3}));  // position_ids
    t.inputs.push_back(absentIn(F, {1, 1, 2, 4}));      // attention_bias
    t.inputs.push_back(absentIn(F, {2}));               // head_sink
    return t;
}
// The same template with float16 wherever it has float (the kernels' half-precision paths).
inline OperatorTemplate asFloat16(OperatorTemplate t) {
    t.variant += t.variant.empty() ? "fp16" : "_fp16";
    for (auto& input : t.inputs)
        if (input.type == F) input.type = onnx::TensorProto::FLOAT16;
    return t;
}
}  // namespace templates

inline const std::vector<OperatorTemplate>& operatorTemplates() {
    using namespace templates;
    static const std::vector<OperatorTemplate> all = [] {
        const std::string ms = "com.microsoft";
        std::vector<OperatorTemplate> v;
        // MatMulNBits: K 32 in 2 blocks of 16, N 4; B [N, blocks, 16 * bits / 8].
        v.push_back(
            {ms,
             "MatMulNBits",
             "4bit",
             {intAttr("K", 32), intAttr("N", 4), intAttr("bits", 4), intAttr("block_size", 16)},
             {in(F, {2, 32}), in(U8, {4, 2, 8}), scale({8}), in(U8, {4}, {0x88}),
              absentIn(I32, {32}, {0, 1}), in(F, {4})}});
        v.push_back(
            {ms,
             "MatMulNBits",
             "8bit",
             {intAttr("K", 32), intAttr("N", 4), intAttr("bits", 8), intAttr("block_size", 16)},
             {in(F, {2, 32}), in(U8, {4, 2, 16}), scale({4, 2}), in(F, {4, 2})}});
        // GatherBlockQuantized: 3 rows of 32 4-bit values (16 bytes), blocks of 16.
        v.push_back({ms,
                     "GatherBlockQuantized",
                     "",
                     {intAttr("block_size", 16)},
                     {in(U8, {3, 16}), in(I64, {2}, {0, 2}), scale({3, 2}), in(U8, {3, 1})}});
        v.push_back(groupQueryAttention(false, false));
        v.push_back(groupQueryAttention(true, false));
        v.push_back(groupQueryAttention(false, true));
        v.push_back(groupQueryAttention(true, true));
        // Attention: hidden 4, 2 heads of 2; mask over the 2 tokens; a past of 1 in the second.
        v.push_back({ms,
                     "Attention",
                     "mask",
                     {intAttr("num_heads", 2)},
                     {in(F, {1, 2, 4}), in(F, {4, 12}), in(F, {12}), in(I32, {1, 2}, {1})}});
        v.push_back({ms,
                     "Attention",
                     "past",
                     {intAttr("num_heads", 2), intAttr("unidirectional", 1)},
                     {in(F, {1, 2, 4}), in(F, {4, 12}), in(F, {12}), absentIn(I32, {1}, {2}),
                      in(F, {2, 1, 2, 1, 2})}});
        v.push_back({ms,
                     "MultiHeadAttention",
                     "separate",
                     {intAttr("num_heads", 2)},
                     {in(F, {1, 2, 4}), in(F, {1, 3, 4}), in(F, {1, 3, 4}), in(F, {12}),
                      in(I32, {1, 3}, {1})}});
        v.push_back({ms,
                     "MultiHeadAttention",
                     "past",
                     {intAttr("num_heads", 2)},
                     {in(F, {1, 2, 4}), in(F, {1, 2, 4}), in(F, {1, 2, 4}), absentIn(F, {12}),
                      absentIn(I32, {1, 3}, {1}), absentIn(F, {1, 2, 2, 3}), in(F, {1, 2, 1, 2}),
                      in(F, {1, 2, 1, 2})}});
        // RotaryEmbedding: [1, 2, 8] (2 heads of 4) and BNSH [1, 2, 2, 4]; caches of 4 positions.
        v.push_back({ms,
                     "RotaryEmbedding",
                     "bsd",
                     {intAttr("num_heads", 2)},
                     {in(F, {1, 2, 8}), in(I64, {1, 2}, {0, 3}), in(F, {4, 2}), in(F, {4, 2})}});
        v.push_back({ms,
                     "RotaryEmbedding",
                     "bnsh",
                     {},
                     {in(F, {1, 2, 2, 4}), in(I64, {1, 2}, {1, 2}), in(F, {4, 2}), in(F, {4, 2})}});
        v.push_back({ms,
                     "QAttention",
                     "",
                     {intAttr("num_heads", 2)},
                     {in(U8, {1, 2, 4}), in(U8, {4, 12}), in(F, {12}), scale(), scale(),
                      absentIn(I32, {1}, {2}), in(U8, {}, {1}), in(U8, {}, {1})}});
        v.push_back({ms,
                     "DynamicQuantizeMatMul",
                     "",
                     {},
                     {in(F, {2, 4}), in(I8, {4, 3}), scale({3}), in(I8, {3}, {0}), in(F, {3})}});
        v.push_back({ms,
                     "MatMulIntegerToFloat",
                     "",
                     {},
                     {in(U8, {2, 4}), in(U8, {4, 3}), scale(), scale({3}), in(U8, {}, {1}),
                      in(U8, {3}, {1}), in(F, {3})}});
        v.push_back({ms,
                     "QGemm",
                     "float_output",
                     {},
                     {in(U8, {2, 4}), scale(), in(U8, {}, {1}), in(U8, {4, 3}), scale({3}),
                      in(U8, {3}, {1}), in(I32, {3})}});
        v.push_back({ms,
                     "QGemm",
                     "quantized_output",
                     {intAttr("transB", 1)},
                     {in(U8, {2, 4}), scale(), in(U8, {}, {1}), in(U8, {3, 4}), scale(),
                      in(U8, {}, {1}), absentIn(I32, {3}), scale(), in(U8, {}, {128})}});
        for (const char* op : {"QLinearAdd", "QLinearMul"})
            v.push_back({ms,
                         op,
                         "",
                         {},
                         {in(U8, {2, 3}), scale(), in(U8, {}, {1}), in(U8, {3}), scale(),
                          in(U8, {}, {1}), scale(), in(U8, {}, {2})}});
        for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu"})
            v.push_back({ms,
                         op,
                         "",
                         {},
                         {in(U8, {2, 3}), scale(), in(U8, {}, {1}), scale(), in(U8, {}, {2})}});
        v.push_back(
            {ms,
             "QLinearSoftmax",
             "",
             {intAttr("opset", 13)},
             {in(U8, {2, 3}), scale(), in(U8, {}, {1}), in(F, {}, {1.0 / 256}), in(U8, {}, {0})}});
        v.push_back({ms,
                     "QLinearConcat",
                     "",
                     {intAttr("axis", 1)},
                     {scale(), in(U8, {}, {1}), in(U8, {2, 3}), scale(), in(U8, {}, {1}),
                      in(U8, {2, 2}), scale(), in(U8, {}, {2})}});
        v.push_back({ms,
                     "QLinearAveragePool",
                     "",
                     {intsAttr("kernel_shape", {2, 2})},
                     {in(U8, {1, 2, 4, 4}), scale(), in(U8, {}, {1}), scale(), in(U8, {}, {1})}});
        v.push_back({ms,
                     "QLinearGlobalAveragePool",
                     "",
                     {},
                     {in(U8, {1, 2, 3, 3}), scale(), in(U8, {}, {1}), scale(), in(U8, {}, {1})}});
        v.push_back({ms,
                     "SkipLayerNormalization",
                     "",
                     {},
                     {in(F, {1, 2, 4}), in(F, {1, 2, 4}), in(F, {4}), in(F, {4}), in(F, {4})}});
        v.push_back({ms,
                     "SkipSimplifiedLayerNormalization",
                     "",
                     {},
                     {in(F, {1, 2, 4}), in(F, {1, 2, 4}), in(F, {4}), in(F, {4})}});
        // EmbedLayerNormalization: vocabulary 5, 4 positions, 2 segments, hidden 4.
        v.push_back({ms,
                     "EmbedLayerNormalization",
                     "",
                     {},
                     {in(I32, {1, 3}, {1, 4, 2}), in(I32, {1, 3}, {0, 1, 1}), in(F, {5, 4}),
                      in(F, {4, 4}), in(F, {2, 4}), in(F, {4}), in(F, {4}), in(I32, {1, 3}, {1})}});
        // GroupNorm: NHWC [1, 2, 2, 4], 2 groups.
        v.push_back({ms,
                     "GroupNorm",
                     "",
                     {intAttr("activation", 0), intAttr("groups", 2)},
                     {in(F, {1, 2, 2, 4}), in(F, {4}), in(F, {4})}});
        v.push_back({ms, "BiasSplitGelu", "", {}, {in(F, {1, 2, 8}), in(F, {8})}});
        v.push_back({ms, "BiasGelu", "", {}, {in(F, {2, 4}), in(F, {4})}});
        v.push_back({ms, "FastGelu", "", {}, {in(F, {2, 4}), in(F, {4})}});
        v.push_back({ms, "Gelu", "", {}, {in(F, {2, 4})}});
        v.push_back({ms, "QuickGelu", "", {}, {in(F, {2, 4})}});
        v.push_back({ms, "BiasAdd", "", {}, {in(F, {1, 2, 4}), in(F, {4}), in(F, {1, 2, 4})}});
        // What ONNX Runtime saves at its extended level: FusedConv (a 3x3 Conv + Relu, Z absent),
        // FusedGemm (Gemm + LeakyRelu, B transposed), FusedMatMul (scaled, B transposed).
        v.push_back(
            {ms,
             "FusedConv",
             "",
             {stringAttr("activation", "Relu"), intsAttr("kernel_shape", {3, 3}),
              intsAttr("pads", {1, 1, 1, 1})},
             {in(F, {1, 2, 4, 4}), in(F, {3, 2, 3, 3}), in(F, {3}), absentIn(F, {1, 3, 4, 4})}});
        v.push_back({ms,
                     "FusedGemm",
                     "",
                     {stringAttr("activation", "LeakyRelu"),
                      {"activation_alpha", onnx::AttributeProto::FLOAT, 0, 0.1f, {}, {}},
                      intAttr("transB", 1)},
                     {in(F, {2, 4}), in(F, {3, 4}), in(F, {3})}});
        TemplateAttribute alpha{"alpha", onnx::AttributeProto::FLOAT, 0, 0.125f, {}, {}};
        v.push_back({ms,
                     "FusedMatMul",
                     "",
                     {alpha, intAttr("transB", 1)},
                     {in(F, {2, 3, 4}), in(F, {2, 5, 4})}});
        // DynamicQuantizeLSTM: 2 steps, batch 1, input 3, hidden 2; W [1, 3, 8], R [1, 2, 8].
        v.push_back({ms,
                     "DynamicQuantizeLSTM",
                     "",
                     {intAttr("hidden_size", 2)},
                     {in(F, {2, 1, 3}), in(I8, {1, 3, 8}), in(I8, {1, 2, 8}), in(F, {1, 16}),
                      in(I32, {1}, {2}), in(F, {1, 1, 2}), in(F, {1, 1, 2}), absentIn(F, {1, 6}),
                      scale({1}), in(I8, {1}, {0}), scale({1}), in(I8, {1}, {0})}});
        // Half-precision variants of the operators with their own float16 code.
        for (std::size_t i = 0, n = v.size(); i < n; ++i) {
            const OperatorTemplate& t = v[i];
            if ((t.opType == "MatMulNBits" && t.variant == "4bit") ||
                (t.opType == "GroupQueryAttention" && t.variant == "separate_rotary") ||
                (t.opType == "MultiHeadAttention" && t.variant == "separate") ||
                (t.opType == "RotaryEmbedding" && t.variant == "bsd") ||
                t.opType == "SkipLayerNormalization")
                v.push_back(asFloat16(t));
        }
        // ONNX Runtime's LayerNormalization and SimplifiedLayerNormalization of opset 1.
        v.push_back({"", "LayerNormalization", "", {}, {in(F, {2, 4}), in(F, {4}), in(F, {4})}});
        v.push_back({"", "SimplifiedLayerNormalization", "", {}, {in(F, {2, 4}), in(F, {4})}});
        return v;
    }();
    return all;
}

}  // namespace onnxlens::testing
