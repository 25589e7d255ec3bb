// ONNX Runtime's contrib operators (com.microsoft) and its default-domain extensions: the checker
// verdict, shape inference over every edge (symbolic dims kept) and the cost model, on small
// models laid out as ONNX Runtime's tools write them: an onnxruntime-genai int4 decoder layer, a
// BERT layer fused by ORT's transformer optimizer, and a QOperator block. Shapes and counts are
// worked out by hand from ContribOperators.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ModelTestSupport.h"
#include "onnxlens/model/CostModel.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ShapeInference.h"

namespace onnxlens {
namespace {

using testing::setTensorType;
using TP = onnx::TensorProto;
using AP = onnx::AttributeProto;

// A small model builder: graph inputs and outputs with symbolic dims, initializers of the given
// type and shape (zero bytes), nodes with attributes.
class Builder {
  public:
    explicit Builder(int opset) {
        model_.set_ir_version(8);
        model_.set_producer_name("onnxlens-tests");
        auto* onnx = model_.add_opset_import();
        onnx->set_domain("");
        onnx->set_version(opset);
        auto* ms = model_.add_opset_import();
        ms->set_domain(kMicrosoftDomain);
        ms->set_version(1);
        graph().set_name("g");
    }
    onnx::GraphProto& graph() { return *model_.mutable_graph(); }
    onnx::ModelProto& model() { return model_; }

    void input(const std::string& name, int type, const std::vector<std::string>& dims) {
        auto* info = graph().add_input();
        info->set_name(name);
        setTensorType(info, type, dims);
    }
    void output(const std::string& name, int type, const std::vector<std::string>& dims) {
        auto* info = graph().add_output();
        info->set_name(name);
        setTensorType(info, type, dims);
    }
    void init(const std::string& name, int type, const std::vector<std::int64_t>& dims,
              std::int64_t value = 0) {
        auto* t = graph().add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        std::int64_t n = 1;
        for (auto d : dims) {
            t->add_dims(d);
            n *= d;
        }
        const std::size_t size = type == TP::FLOAT || type == TP::INT32 ? 4
                                 : type == TP::INT64                    ? 8
                                 : type == TP::FLOAT16                  ? 2
                                                                        : 1;
        std::string bytes(static_cast<std::size_t>(n) * size, '\0');
        if (n == 1 && type == TP::INT64) std::memcpy(bytes.data(), &value, 8);
        t->set_raw_data(bytes);
    }
    onnx::NodeProto* node(const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs,
                          const std::string& domain = kMicrosoftDomain) {
        auto* n = testing::addNode(graph(), op, inputs, outputs, name);
        n->set_domain(domain);
        return n;
    }

  private:
    onnx::ModelProto model_;
};

void intAttr(onnx::NodeProto* node, const std::string& name, std::int64_t value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AP::INT);
    a->set_i(value);
}

void floatAttr(onnx::NodeProto* node, const std::string& name, float value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AP::FLOAT);
    a->set_f(value);
}

void intsAttr(onnx::NodeProto* node, const std::string& name, std::vector<std::int64_t> values) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AP::INTS);
    for (auto v : values) a->add_ints(v);
}

onnx::NodeProto* matMulNBits(Builder& b, const std::string& name, const std::string& a,
                             const std::string& y, std::int64_t k, std::int64_t n) {
    // ORT's quantizer: B [N, k_blocks, blob], scales [N * k_blocks]; block 16, 4 bits.
    const std::int64_t blocks = k / 16;
    b.init(name + ".qweight", TP::UINT8, {n, blocks, 8});
    b.init(name + ".scales", TP::FLOAT, {n * blocks});
    auto* node = b.node("MatMulNBits", name, {a, name + ".qweight", name + ".scales"}, {y});
    intAttr(node, "K", k);
    intAttr(node, "N", n);
    intAttr(node, "bits", 4);
    intAttr(node, "block_size", 16);
    intAttr(node, "accuracy_level", 4);
    return node;
}

// One decoder layer as onnxruntime-genai's builder writes an int4 model (opset 14): hidden 64,
// 4 query heads and 2 key/value heads of 16 (ONNX Runtime's CPU kernel wants heads of a multiple
// of 16), MLP 128, vocabulary 32.
onnx::ModelProto genaiDecoder(int opset = 14) {
    Builder b(opset);
    const std::string F = "batch_size", S = "sequence_length", P = "past_sequence_length",
                      T = "total_sequence_length";
    b.input("input_ids", TP::INT64, {F, S});
    b.input("attention_mask", TP::INT64, {F, T});
    b.input("past_key_values.0.key", TP::FLOAT, {F, "2", P, "16"});
    b.input("past_key_values.0.value", TP::FLOAT, {F, "2", P, "16"});
    // seqlens_k and total_sequence_length from the attention mask.
    b.init("/model/constants/TensorProto.INT64/1D/1", TP::INT64, {1}, 1);
    b.init("/model/constants/TensorProto.INT64/0D/1", TP::INT64, {}, 1);
    auto* reduce = b.node("ReduceSum", "/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum",
                          {"attention_mask", "/model/constants/TensorProto.INT64/1D/1"},
                          {"/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum/output_0"}, "");
    intAttr(reduce, "keepdims", 0);
    b.node("Sub", "/model/attn_mask_reformat/attn_mask_subgraph/Sub",
           {"/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum/output_0",
            "/model/constants/TensorProto.INT64/0D/1"},
           {"/model/attn_mask_reformat/attn_mask_subgraph/Sub/output_0"}, "");
    intAttr(b.node("Cast", "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast",
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Sub/output_0"},
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0"}, ""),
            "to", TP::INT32);
    b.node("Shape", "/model/attn_mask_reformat/attn_mask_subgraph/Shape", {"attention_mask"},
           {"/model/attn_mask_reformat/attn_mask_subgraph/Shape/output_0"}, "");
    intAttr(b.node("Gather", "/model/attn_mask_reformat/attn_mask_subgraph/Gather",
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Shape/output_0",
                    "/model/constants/TensorProto.INT64/0D/1"},
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Gather/output_0"}, ""),
            "axis", 0);
    intAttr(b.node("Cast", "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast",
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Gather/output_0"},
                   {"/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0"}, ""),
            "to", TP::INT32);
    // Embedding: a 4-bit block-quantized table (uint8, two values a byte).
    b.init("model.embed_tokens.qweight", TP::UINT8, {32, 32});
    b.init("model.embed_tokens.scales", TP::FLOAT, {32, 4});
    auto* embed = b.node("GatherBlockQuantized", "/model/embed_tokens/GatherBlockQuantized",
                         {"model.embed_tokens.qweight", "input_ids", "model.embed_tokens.scales"},
                         {"/model/embed_tokens/GatherBlockQuantized/output_0"});
    intAttr(embed, "bits", 4);
    intAttr(embed, "block_size", 16);
    intAttr(embed, "gather_axis", 0);
    intAttr(embed, "quantize_axis", 1);
    b.init("model.layers.0.input_layernorm.weight", TP::FLOAT, {64});
    auto* norm = b.node("SimplifiedLayerNormalization", "/model/layers.0/input_layernorm/LayerNorm",
                        {"/model/embed_tokens/GatherBlockQuantized/output_0",
                         "model.layers.0.input_layernorm.weight"},
                        {"/model/layers.0/input_layernorm/output_0"}, "");
    intAttr(norm, "axis", -1);
    floatAttr(norm, "epsilon", 1e-6f);
    intAttr(norm, "stash_type", 1);
    matMulNBits(b, "/model/layers.0/attn/qkv_proj/MatMul",
                "/model/layers.0/input_layernorm/output_0",
                "/model/layers.0/attn/qkv_proj/MatMul/output_0", 64, 128);
    b.init("cos_cache", TP::FLOAT, {16, 8});
    b.init("sin_cache", TP::FLOAT, {16, 8});
    auto* gqa = b.node(
        "GroupQueryAttention", "/model/layers.0/attn/GroupQueryAttention",
        {"/model/layers.0/attn/qkv_proj/MatMul/output_0", "", "", "past_key_values.0.key",
         "past_key_values.0.value",
         "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0",
         "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0", "cos_cache",
         "sin_cache"},
        {"/model/layers.0/attn/GroupQueryAttention/output_0", "present.0.key", "present.0.value"});
    intAttr(gqa, "num_heads", 4);
    intAttr(gqa, "kv_num_heads", 2);
    intAttr(gqa, "do_rotary", 1);
    intAttr(gqa, "rotary_interleaved", 0);
    intAttr(gqa, "local_window_size", -1);
    floatAttr(gqa, "scale", 0.25f);
    matMulNBits(b, "/model/layers.0/attn/o_proj/MatMul",
                "/model/layers.0/attn/GroupQueryAttention/output_0",
                "/model/layers.0/attn/o_proj/MatMul/output_0", 64, 64);
    b.init("model.layers.0.post_attention_layernorm.weight", TP::FLOAT, {64});
    floatAttr(b.node("SkipSimplifiedLayerNormalization",
                     "/model/layers.0/post_attention_layernorm/SkipLayerNorm",
                     {"/model/layers.0/attn/o_proj/MatMul/output_0",
                      "/model/embed_tokens/GatherBlockQuantized/output_0",
                      "model.layers.0.post_attention_layernorm.weight"},
                     {"/model/layers.0/post_attention_layernorm/output_0", "", "",
                      "/model/layers.0/post_attention_layernorm/output_3"}),
              "epsilon", 1e-6f);
    const std::string mlpIn = "/model/layers.0/post_attention_layernorm/output_0";
    matMulNBits(b, "/model/layers.0/mlp/gate_proj/MatMul", mlpIn,
                "/model/layers.0/mlp/gate_proj/MatMul/output_0", 64, 128);
    matMulNBits(b, "/model/layers.0/mlp/up_proj/MatMul", mlpIn,
                "/model/layers.0/mlp/up_proj/MatMul/output_0", 64, 128);
    b.node("Sigmoid", "/model/layers.0/mlp/act_fn/Sigmoid",
           {"/model/layers.0/mlp/gate_proj/MatMul/output_0"},
           {"/model/layers.0/mlp/act_fn/Sigmoid/output_0"}, "");
    b.node("Mul", "/model/layers.0/mlp/act_fn/Mul",
           {"/model/layers.0/mlp/gate_proj/MatMul/output_0",
            "/model/layers.0/mlp/act_fn/Sigmoid/output_0"},
           {"/model/layers.0/mlp/act_fn/Mul/output_0"}, "");
    b.node(
        "Mul", "/model/layers.0/mlp/Mul",
        {"/model/layers.0/mlp/act_fn/Mul/output_0", "/model/layers.0/mlp/up_proj/MatMul/output_0"},
        {"/model/layers.0/mlp/Mul/output_0"}, "");
    matMulNBits(b, "/model/layers.0/mlp/down_proj/MatMul", "/model/layers.0/mlp/Mul/output_0",
                "/model/layers.0/mlp/down_proj/MatMul/output_0", 128, 64);
    b.init("model.layers.1.final_norm_layernorm.weight", TP::FLOAT, {64});
    floatAttr(b.node("SkipSimplifiedLayerNormalization",
                     "/model/layers.1/final_norm_layernorm/SkipLayerNorm",
                     {"/model/layers.0/mlp/down_proj/MatMul/output_0",
                      "/model/layers.0/post_attention_layernorm/output_3",
                      "model.layers.1.final_norm_layernorm.weight"},
                     {"/model/layers.1/final_norm_layernorm/output_0"}),
              "epsilon", 1e-6f);
    matMulNBits(b, "/lm_head/MatMul", "/model/layers.1/final_norm_layernorm/output_0", "logits", 64,
                32);
    b.output("logits", TP::FLOAT, {F, S, "32"});
    b.output("present.0.key", TP::FLOAT, {F, "2", T, "16"});
    b.output("present.0.value", TP::FLOAT, {F, "2", T, "16"});
    return b.model();
}

// A BERT layer as ORT's transformer optimizer fuses it (opset 14): hidden 16, 2 heads.
onnx::ModelProto fusedBert() {
    Builder b(14);
    for (const char* name : {"input_ids", "segment_ids", "input_mask"})
        b.input(name, TP::INT32, {"batch", "sequence"});
    b.init("word_embeddings", TP::FLOAT, {30, 16});
    b.init("position_embeddings", TP::FLOAT, {8, 16});
    b.init("token_type_embeddings", TP::FLOAT, {2, 16});
    for (const char* name : {"ln0.gamma", "ln0.beta", "ln1.gamma", "ln1.beta", "ln2.gamma",
                             "ln2.beta", "o.bias", "ffn2.bias", "pool.bias"})
        b.init(name, TP::FLOAT, {16});
    floatAttr(b.node("EmbedLayerNormalization", "EmbedLayerNormalization_0",
                     {"input_ids", "segment_ids", "word_embeddings", "position_embeddings",
                      "token_type_embeddings", "ln0.gamma", "ln0.beta", "input_mask"},
                     {"embed_output", "mask_index"}),
              "epsilon", 1e-12f);
    b.init("qkv.weight", TP::FLOAT, {16, 48});
    b.init("qkv.bias", TP::FLOAT, {48});
    intAttr(b.node("Attention", "Attention_0",
                   {"embed_output", "qkv.weight", "qkv.bias", "mask_index"}, {"attention_output"}),
            "num_heads", 2);
    b.init("o.weight", TP::FLOAT, {16, 16});
    b.node("MatMul", "MatMul_o", {"attention_output", "o.weight"}, {"o_out"}, "");
    floatAttr(b.node("SkipLayerNormalization", "SkipLayerNorm_0",
                     {"o_out", "embed_output", "ln1.gamma", "ln1.beta", "o.bias"}, {"ln1_out"}),
              "epsilon", 1e-12f);
    b.init("ffn1.weight", TP::FLOAT, {16, 64});
    b.init("ffn1.bias", TP::FLOAT, {64});
    b.node("MatMul", "MatMul_ffn1", {"ln1_out", "ffn1.weight"}, {"ffn1_out"}, "");
    b.node("BiasGelu", "BiasGelu_0", {"ffn1_out", "ffn1.bias"}, {"gelu_out"});
    b.init("ffn2.weight", TP::FLOAT, {64, 16});
    b.node("MatMul", "MatMul_ffn2", {"gelu_out", "ffn2.weight"}, {"ffn2_out"}, "");
    floatAttr(b.node("SkipLayerNormalization", "SkipLayerNorm_1",
                     {"ffn2_out", "ln1_out", "ln2.gamma", "ln2.beta", "ffn2.bias"}, {"ln2_out"}),
              "epsilon", 1e-12f);
    b.init("pool.weight", TP::FLOAT, {16, 16});
    b.node("MatMul", "MatMul_pool", {"ln2_out", "pool.weight"}, {"pool_mm"}, "");
    b.node("FastGelu", "FastGelu_0", {"pool_mm", "pool.bias"}, {"pooled"});
    b.output("ln2_out", TP::FLOAT, {"batch", "sequence", "16"});
    b.output("pooled", TP::FLOAT, {"batch", "sequence", "16"});
    return b.model();
}

// A QOperator block as ORT's quantizer writes it (opset 13, uint8 activations).
onnx::ModelProto qoperatorBlock() {
    Builder b(13);
    b.input("x", TP::UINT8, {"N", "4", "8", "8"});
    b.input("f", TP::FLOAT, {"N", "8"});
    b.init("x_bias", TP::UINT8, {1, 4, 1, 1});
    for (const char* s : {"s_x", "s_b", "s_y", "s_a", "s_g", "s_q", "s_w", "s_o"})
        b.init(s, TP::FLOAT, {});
    for (const char* z : {"z_x", "z_b", "z_y", "z_a", "z_g", "z_q", "z_o"})
        b.init(z, TP::UINT8, {});
    b.init("z_w", TP::INT8, {});
    b.node("QLinearAdd", "QLinearAdd_0", {"x", "s_x", "z_x", "x_bias", "s_b", "z_b", "s_y", "z_y"},
           {"add_q"});
    floatAttr(b.node("QLinearLeakyRelu", "QLinearLeakyRelu_0",
                     {"add_q", "s_y", "z_y", "s_a", "z_a"}, {"relu_q"}),
              "alpha", 0.1f);
    b.node("QLinearSigmoid", "QLinearSigmoid_0", {"relu_q", "s_a", "z_a", "s_g", "z_g"}, {"sig_q"});
    b.node("QLinearMul", "QLinearMul_0",
           {"sig_q", "s_g", "z_g", "relu_q", "s_a", "z_a", "s_q", "z_q"}, {"mul_q"});
    auto* pool = b.node("QLinearAveragePool", "QLinearAveragePool_0",
                        {"mul_q", "s_q", "z_q", "s_q", "z_q"}, {"pool_q"});
    intsAttr(pool, "kernel_shape", {2, 2});
    intsAttr(pool, "strides", {2, 2});
    b.node("QLinearGlobalAveragePool", "QLinearGlobalAveragePool_0",
           {"pool_q", "s_q", "z_q", "s_q", "z_q"}, {"gap_q"});
    intAttr(b.node("QLinearConcat", "QLinearConcat_0",
                   {"s_q", "z_q", "gap_q", "s_q", "z_q", "gap_q", "s_q", "z_q"}, {"cat_q"}),
            "axis", 1);
    b.node("Flatten", "Flatten_0", {"cat_q"}, {"flat_q"}, "");
    b.init("w_q", TP::INT8, {10, 8});
    b.init("c_q", TP::INT32, {10});
    intAttr(b.node("QGemm", "QGemm_0",
                   {"flat_q", "s_q", "z_q", "w_q", "s_w", "z_w", "c_q", "s_o", "z_o"}, {"gemm_q"}),
            "transB", 1);
    auto* softmax = b.node("QLinearSoftmax", "QLinearSoftmax_0",
                           {"gemm_q", "s_o", "z_o", "s_o", "z_o"}, {"probs_q"});
    intAttr(softmax, "axis", -1);
    intAttr(softmax, "opset", 13);
    b.init("w_dq", TP::INT8, {8, 4});
    b.node("DynamicQuantizeMatMul", "DynamicQuantizeMatMul_0", {"f", "w_dq", "s_w", "z_w"},
           {"dq_out"});
    b.init("a_int", TP::UINT8, {3, 8});
    b.node("MatMulIntegerToFloat", "MatMulIntegerToFloat_0", {"a_int", "w_dq", "s_x", "s_w"},
           {"mi_out"});
    b.output("probs_q", TP::UINT8, {"N", "10"});
    b.output("dq_out", TP::FLOAT, {"N", "4"});
    b.output("mi_out", TP::FLOAT, {"3", "4"});
    return b.model();
}

std::string dimsText(const InferredShapes& shapes, const std::string& value) {
    const auto* type = shapes.typeOf(value);
    if (!type || !type->has_tensor_type()) return "untyped";
    std::string text = std::to_string(type->tensor_type().elem_type()) + ":";
    if (!type->tensor_type().has_shape()) return text + "?";
    for (const auto& d : type->tensor_type().shape().dim())
        text += "[" + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param()) + "]";
    return text;
}

// Writes the models for the manual cross-checks (python onnx, onnxlens-cli) when asked.
void dumpIfAsked(const onnx::ModelProto& model, const std::string& name) {
    const char* dir = std::getenv("ONNXLENS_DUMP_MS_MODELS");
    if (!dir) return;
    std::ofstream(std::string(dir) + "/" + name + ".onnx", std::ios::binary)
        << testing::serialize(model);
}

TEST(MicrosoftOpSchemas, GenaiDecoderEveryEdgeTypedWithSymbolicDims) {
    const auto model = genaiDecoder();
    dumpIfAsked(model, "genai_int4_decoder");
    const auto shapes = inferShapes(model);
    const ShapeInferenceSummary summary = summarizeShapeInference(model, *shapes);
    EXPECT_EQ(summary.knownEdges, summary.totalEdges) << summary.message;
    EXPECT_EQ(summary.totalEdges, 23);
    EXPECT_TRUE(summary.ok) << summary.message;
    const std::string FS = "[batch_size][sequence_length]";
    EXPECT_EQ(dimsText(*shapes, "/model/embed_tokens/GatherBlockQuantized/output_0"),
              "1:" + FS + "[64]");
    EXPECT_EQ(dimsText(*shapes, "/model/layers.0/input_layernorm/output_0"), "1:" + FS + "[64]");
    EXPECT_EQ(dimsText(*shapes, "/model/layers.0/attn/qkv_proj/MatMul/output_0"),
              "1:" + FS + "[128]");
    // Packed QKV of 128 = (4 + 2 * 2) heads of 16: the output has the 4 query heads.
    EXPECT_EQ(dimsText(*shapes, "/model/layers.0/attn/GroupQueryAttention/output_0"),
              "1:" + FS + "[64]");
    EXPECT_EQ(dimsText(*shapes, "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0"),
              "6:[batch_size]");
    EXPECT_EQ(
        dimsText(*shapes, "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0"),
        "6:");
    EXPECT_EQ(dimsText(*shapes, "/model/layers.0/post_attention_layernorm/output_3"),
              "1:" + FS + "[64]");
    EXPECT_EQ(dimsText(*shapes, "/model/layers.0/mlp/Mul/output_0"), "1:" + FS + "[128]");
    EXPECT_EQ(dimsText(*shapes, "logits"), "1:" + FS + "[32]");
    // The present length keeps the name the graph declares.
    EXPECT_EQ(dimsText(*shapes, "present.0.key"), "1:[batch_size][2][total_sequence_length][16]");
}

TEST(MicrosoftOpSchemas, GenaiDecoderCheckerNamesOrtExtensionsAndCountsCheckedNodes) {
    const CheckerVerdict verdict = runChecker(genaiDecoder());
    EXPECT_FALSE(verdict.ok);
    EXPECT_NE(verdict.message.find("ai.onnx::SimplifiedLayerNormalization (1 node: main graph node "
                                   "'/model/layers.0/input_layernorm/LayerNorm'"),
              std::string::npos)
        << verdict.message;
    EXPECT_NE(verdict.message.find("not an ONNX operator at any opset; ONNX Runtime accepts it as "
                                   "its own extension, and onnxlens runs it as ONNX Runtime does"),
              std::string::npos);
    // Nothing else is wrong with the model.
    EXPECT_EQ(verdict.message.find('\n'), std::string::npos) << verdict.message;
    const std::map<std::string, std::int64_t> expected{
        {"com.microsoft::GatherBlockQuantized", 1},
        {"com.microsoft::GroupQueryAttention", 1},
        {"com.microsoft::MatMulNBits", 6},
        {"com.microsoft::SkipSimplifiedLayerNormalization", 2}};
    EXPECT_EQ(verdict.checkedByOnnxlensSchemas, expected);
    EXPECT_TRUE(verdict.notChecked.empty());
    ASSERT_EQ(verdict.ortExtensionNodes.size(), 1u);
    EXPECT_NE(
        verdict.microsoftNote.find("10 com.microsoft nodes checked against onnxlens's schemas"),
        std::string::npos)
        << verdict.microsoftNote;
}

TEST(MicrosoftOpSchemas, GenaiDecoderAtOpset21IsTheSameFinding) {
    // Opset 21 is newer than the onnx library: the newer-opset checks must not call the
    // extension an unknown ai.onnx operator; shape inference still types every edge.
    const auto model = genaiDecoder(21);
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_FALSE(verdict.ok);
    EXPECT_EQ(verdict.message.find("not an ai.onnx operator of opset 21"), std::string::npos)
        << verdict.message;
    EXPECT_NE(verdict.message.find("not an ONNX operator at any opset"), std::string::npos);
    const auto summary = runShapeInference(model);
    EXPECT_EQ(summary.knownEdges, summary.totalEdges) << summary.message;
}

TEST(MicrosoftOpSchemas, LayerNormalizationBeforeOpset17FailsFrom17Passes) {
    for (const int opset : {14, 17}) {
        Builder b(opset);
        b.input("x", TP::FLOAT, {"batch", "4"});
        b.init("scale", TP::FLOAT, {4});
        b.init("bias", TP::FLOAT, {4});
        b.node("LayerNormalization", "ln", {"x", "scale", "bias"}, {"y"}, "");
        b.node("Relu", "relu", {"y"}, {"z"}, "");
        b.output("z", TP::FLOAT, {"batch", "4"});
        const CheckerVerdict verdict = runChecker(b.model());
        const auto summary = runShapeInference(b.model());
        EXPECT_EQ(summary.knownEdges, 2) << opset << summary.message;
        if (opset == 14) {
            EXPECT_FALSE(verdict.ok);
            EXPECT_NE(verdict.message.find("ai.onnx::LayerNormalization (1 node: main graph node "
                                           "'ln' (LayerNormalization, ai.onnx opset 14)): not an "
                                           "ONNX operator before opset 17; ONNX Runtime accepts "
                                           "it as its own extension"),
                      std::string::npos)
                << verdict.message;
        } else {
            EXPECT_TRUE(verdict.ok) << verdict.message;
            EXPECT_TRUE(verdict.ortExtensionNodes.empty());
        }
    }
}

TEST(MicrosoftOpSchemas, FusedBertPassesWithCountsAndShapes) {
    const auto model = fusedBert();
    dumpIfAsked(model, "bert_fused");
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_TRUE(verdict.ok) << verdict.message;
    const std::map<std::string, std::int64_t> expected{
        {"com.microsoft::Attention", 1},
        {"com.microsoft::BiasGelu", 1},
        {"com.microsoft::EmbedLayerNormalization", 1},
        {"com.microsoft::FastGelu", 1},
        {"com.microsoft::SkipLayerNormalization", 2}};
    EXPECT_EQ(verdict.checkedByOnnxlensSchemas, expected);
    const auto shapes = inferShapes(model);
    const auto summary = summarizeShapeInference(model, *shapes);
    EXPECT_TRUE(summary.ok) << summary.message;
    EXPECT_EQ(summary.knownEdges, summary.totalEdges);
    EXPECT_EQ(summary.totalEdges, 11);
    EXPECT_EQ(dimsText(*shapes, "embed_output"), "1:[batch][sequence][16]");
    EXPECT_EQ(dimsText(*shapes, "mask_index"), "6:[batch]");
    EXPECT_EQ(dimsText(*shapes, "attention_output"), "1:[batch][sequence][16]");
    EXPECT_EQ(dimsText(*shapes, "gelu_out"), "1:[batch][sequence][64]");
}

TEST(MicrosoftOpSchemas, QOperatorBlockShapes) {
    const auto model = qoperatorBlock();
    dumpIfAsked(model, "qoperator_block");
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_TRUE(verdict.ok) << verdict.message;
    EXPECT_EQ(verdict.checkedByOnnxlensSchemas.size(), 11u);
    const auto shapes = inferShapes(model);
    const auto summary = summarizeShapeInference(model, *shapes);
    EXPECT_TRUE(summary.ok) << summary.message;
    EXPECT_EQ(summary.knownEdges, summary.totalEdges);
    EXPECT_EQ(dimsText(*shapes, "add_q"), "2:[N][4][8][8]");
    EXPECT_EQ(dimsText(*shapes, "pool_q"), "2:[N][4][4][4]");
    EXPECT_EQ(dimsText(*shapes, "gap_q"), "2:[N][4][1][1]");
    EXPECT_EQ(dimsText(*shapes, "cat_q"), "2:[N][8][1][1]");
    EXPECT_EQ(dimsText(*shapes, "gemm_q"), "2:[N][10]");
    EXPECT_EQ(dimsText(*shapes, "probs_q"), "2:[N][10]");
    EXPECT_EQ(dimsText(*shapes, "dq_out"), "1:[N][4]");
    EXPECT_EQ(dimsText(*shapes, "mi_out"), "1:[3][4]");
}

TEST(MicrosoftOpSchemas, PresentLengthIsPastPlusNewForMultiHeadAttention) {
    Builder b(14);
    b.input("q", TP::FLOAT, {"batch", "seq", "16"});
    b.input("k", TP::FLOAT, {"batch", "seq", "16"});
    b.input("v", TP::FLOAT, {"batch", "seq", "16"});
    b.input("past_key", TP::FLOAT, {"batch", "2", "past", "8"});
    b.input("past_value", TP::FLOAT, {"batch", "2", "past", "8"});
    intAttr(
        b.node("MultiHeadAttention", "mha", {"q", "k", "v", "", "", "", "past_key", "past_value"},
               {"out", "present_key", "present_value"}),
        "num_heads", 2);
    b.output("out", TP::FLOAT, {});
    b.model().mutable_graph()->mutable_output(0)->clear_type();
    const auto shapes = inferShapes(b.model());
    EXPECT_EQ(dimsText(*shapes, "out"), "1:[batch][seq][16]");
    EXPECT_EQ(dimsText(*shapes, "present_key"), "1:[batch][2][past + seq][8]");
}

TEST(MicrosoftOpSchemas, BrokenNodesFailNamingTheNode) {
    struct Case {
        const char* what;
        std::function<void(onnx::ModelProto&)> breakIt;
        const char* expected;
    };
    const std::vector<Case> cases = {
        {"missing required input",
         [](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(1)->set_input(1, ""); },
         "Attention_0"},
        {"wrong attribute type",
         [](onnx::ModelProto& m) {
             auto* a = m.mutable_graph()->mutable_node(1)->mutable_attribute(0);
             a->set_type(AP::FLOAT);
             a->set_f(2);
         },
         "Attention_0"},
        {"missing required attribute",
         [](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(1)->clear_attribute(); },
         "num_heads"},
        {"unknown attribute",
         [](onnx::ModelProto& m) { intAttr(m.mutable_graph()->mutable_node(9), "bogus", 1); },
         "bogus"},
        {"wrong input type",
         [](onnx::ModelProto& m) {
             auto* g = m.mutable_graph();
             auto* in = g->add_input();
             in->set_name("ints");
             setTensorType(in, TP::INT32, {"batch", "sequence", "64"});
             g->mutable_node(5)->set_input(0, "ints");
         },
         "BiasGelu_0"},
    };
    for (const auto& c : cases) {
        auto model = fusedBert();
        c.breakIt(model);
        const CheckerVerdict verdict = runChecker(model);
        EXPECT_FALSE(verdict.ok) << c.what;
        EXPECT_NE(verdict.message.find(c.expected), std::string::npos)
            << c.what << ": " << verdict.message;
    }
    auto model = fusedBert();
    model.mutable_graph()->mutable_node(5)->set_input(0, "input_ids");
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_NE(
        verdict.message.find("main graph node 'BiasGelu_0' (com.microsoft::BiasGelu): input 0 "
                             "'input_ids' (A) is int32, a type the operator does not take "
                             "(bfloat16, double, float, float16)"),
        std::string::npos)
        << verdict.message;
}

TEST(MicrosoftOpSchemas, UnknownOperatorsAreNotCheckedNeitherPassedNorFailed) {
    auto model = fusedBert();
    auto* g = model.mutable_graph();
    auto* node = testing::addNode(*g, "SomeFutureOp", {"ln2_out"}, {"future"}, "future_0");
    node->set_domain(kMicrosoftDomain);
    auto* custom = testing::addNode(*g, "Custom", {"ln2_out"}, {"custom"}, "custom_0");
    custom->set_domain("com.example");
    auto* opset = model.add_opset_import();
    opset->set_domain("com.example");
    opset->set_version(1);
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_TRUE(verdict.ok) << verdict.message;
    ASSERT_EQ(verdict.notChecked.size(), 2u);
    EXPECT_EQ(verdict.notChecked[0], "main graph node 'future_0' (com.microsoft::SomeFutureOp)");
    EXPECT_EQ(verdict.notChecked[1], "main graph node 'custom_0' (com.example::Custom)");
    EXPECT_EQ(verdict.checkedByOnnxlensSchemas.count("com.microsoft::SomeFutureOp"), 0u);
    EXPECT_NE(verdict.microsoftNote.find("2 nodes not checked (no schema in onnx or onnxlens)"),
              std::string::npos)
        << verdict.microsoftNote;
}

TEST(MicrosoftOpSchemas, CostCountsPackedWeightsAndPastLength) {
    const auto genai = computeModelCost(genaiDecoder(), {{"batch_size", 1},
                                                         {"sequence_length", 4},
                                                         {"past_sequence_length", 3},
                                                         {"total_sequence_length", 7}});
    ASSERT_TRUE(genai) << genai.error().message;
    std::map<std::string, const NodeCost*> byName;
    for (const auto& n : genai->nodes) byName[n.name] = &n;
    const NodeCost& qkv = *byName.at("/model/layers.0/attn/qkv_proj/MatMul");
    // M * N * K = 4 * 128 * 64; weights 128 x 4 blocks x 8 bytes, scales 512 floats.
    EXPECT_DOUBLE_EQ(qkv.figures.macs, 4.0 * 128 * 64);
    EXPECT_DOUBLE_EQ(qkv.figures.flops, 2 * 4.0 * 128 * 64);
    EXPECT_EQ(qkv.figures.parameterBytes, 128u * 4 * 8 + 512 * 4);
    // Parameters are weights, not the bytes that pack them: 128 x 64 4-bit weights + 512 scales.
    EXPECT_EQ(qkv.figures.parameters, 128u * 64 + 512);
    // The model's 4-bit weights: MatMulNBits N x K (qkv 128x64, o 64x64, gate and up 128x64,
    // down 64x128, lm_head 32x64) and the embedding's 32 x 32 bytes of two weights each.
    const auto packed = genai->parametersByType.find("4-bit packed");
    ASSERT_NE(packed, genai->parametersByType.end());
    const std::uint64_t weights4 = 128 * 64 + 64 * 64 + 2 * 128 * 64 + 64 * 128 + 32 * 64;
    EXPECT_EQ(packed->second.parameters, weights4 + 32 * 32 * 2);
    EXPECT_EQ(packed->second.parameterBytes, (weights4 + 32 * 32 * 2) / 2);
    EXPECT_EQ(genai->parametersByType.count("uint8"), 0u);
    const auto loaded = loadModelFromBytes(genaiDecoder().SerializeAsString(), "genai.onnx", {});
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto summary = summarizeModel(*loaded);
    ASSERT_TRUE(summary) << summary.error().message;
    std::uint64_t floats = 0;
    for (const auto& [type, f] : genai->parametersByType)
        if (type != "4-bit packed") floats += f.parameters;
    EXPECT_EQ(static_cast<std::uint64_t>(summary->initializers.parameters),
              packed->second.parameters + floats);
    const NodeCost& gqa = *byName.at("/model/layers.0/attn/GroupQueryAttention");
    // Q x K^T and weights x V over T = 3 + 4 for 4 heads of 16: 2 * B * S * T * 64.
    EXPECT_TRUE(gqa.shapesKnown) << gqa.note;
    EXPECT_DOUBLE_EQ(gqa.figures.macs, 2.0 * 1 * 4 * 7 * 64);
    EXPECT_DOUBLE_EQ(gqa.figures.flops, 2 * gqa.figures.macs + 3.0 * 4 * 4 * 7);
    const NodeCost& norm = *byName.at("/model/layers.0/input_layernorm/LayerNorm");
    EXPECT_EQ(norm.opType, "SimplifiedLayerNormalization");
    EXPECT_DOUBLE_EQ(norm.figures.flops, 4.0 * 4 * 64);
    const NodeCost& skip = *byName.at("/model/layers.0/post_attention_layernorm/SkipLayerNorm");
    EXPECT_DOUBLE_EQ(skip.figures.flops, 5.0 * 4 * 64);
    EXPECT_EQ(genai->nodesWithUnknownShapes, 0);

    const auto bert = computeModelCost(fusedBert(), {{"batch", 1}, {"sequence", 4}});
    ASSERT_TRUE(bert) << bert.error().message;
    for (const auto& n : bert->nodes) {
        if (n.name == "Attention_0") {
            // Projection 4 x 16 x 48, then Q x K^T and weights x V: 4 x 4 x (16 + 16).
            EXPECT_DOUBLE_EQ(n.figures.macs, 4.0 * 16 * 48 + 4.0 * 4 * 32);
            EXPECT_DOUBLE_EQ(n.figures.flops, 2 * n.figures.macs + 3.0 * 2 * 4 * 4 + 4.0 * 48);
        }
        if (n.name == "BiasGelu_0") {
            EXPECT_DOUBLE_EQ(n.figures.flops, 2.0 * 4 * 64);
        }
    }
    const auto q = computeModelCost(qoperatorBlock(), {{"N", 2}});
    ASSERT_TRUE(q) << q.error().message;
    for (const auto& n : q->nodes) {
        if (n.name == "QGemm_0") {
            EXPECT_DOUBLE_EQ(n.figures.macs, 2.0 * 10 * 8);
        } else if (n.name == "QLinearAveragePool_0") {
            EXPECT_DOUBLE_EQ(n.figures.flops, 2.0 * 4 * 4 * 4 * 4);
        } else if (n.name == "QLinearAdd_0") {
            EXPECT_EQ(n.figures.bytesWritten, 2u * 4 * 8 * 8);
        }
    }
}

// ONNX Runtime's `extended` level as it saves a CNN and BERT: FusedConv (Conv + Relu/Clip, a
// residual Z), FusedMatMul (the attention scores with the scale in alpha, transposes folded,
// transBatch) and FusedGemm (the pooler's Gemm + Tanh).
onnx::ModelProto ortExtendedProducts() {
    Builder b(17);
    auto stringAttr = [](onnx::NodeProto* node, const std::string& name, const std::string& v) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(AP::STRING);
        a->set_s(v);
    };
    b.input("image", TP::FLOAT, {"N", "3", "17", "15"});
    b.init("conv.w", TP::FLOAT, {8, 3, 3, 3});
    b.init("conv.b", TP::FLOAT, {8});
    auto* conv = b.node("FusedConv", "FusedConv_0", {"image", "conv.w", "conv.b"}, {"conv_out"});
    intsAttr(conv, "strides", {2, 2});
    intsAttr(conv, "pads", {1, 1, 1, 1});
    stringAttr(conv, "activation", "Clip");
    auto* params = conv->add_attribute();
    params->set_name("activation_params");
    params->set_type(AP::FLOATS);
    params->add_floats(0.0f);
    params->add_floats(6.0f);
    b.init("dw.w", TP::FLOAT, {8, 1, 3, 3});
    auto* dw = b.node("FusedConv", "FusedConv_1", {"conv_out", "dw.w", "", "conv_out"}, {"dw_out"});
    intAttr(dw, "group", 8);
    intsAttr(dw, "pads", {1, 1, 1, 1});
    stringAttr(dw, "activation", "Relu");

    b.input("q", TP::FLOAT, {"batch", "12", "sequence", "64"});
    b.input("k", TP::FLOAT, {"batch", "12", "sequence", "64"});
    auto* scores = b.node("FusedMatMul", "FusedMatMul_0", {"q", "k"}, {"scores"});
    floatAttr(scores, "alpha", 0.125f);
    intAttr(scores, "transB", 1);
    b.input("qt", TP::FLOAT, {"sequence", "batch", "12", "64"});
    b.input("kt", TP::FLOAT, {"64", "batch", "12", "sequence"});
    auto* batched = b.node("FusedMatMul", "FusedMatMul_1", {"qt", "kt"}, {"scores_t"});
    intAttr(batched, "transBatchA", 1);
    intAttr(batched, "transBatchB", 1);
    b.input("v", TP::FLOAT, {"64", "sequence"});
    auto* ta = b.node("FusedMatMul", "FusedMatMul_2", {"v", "q"}, {"vq"});
    intAttr(ta, "transA", 1);
    intAttr(ta, "transB", 1);

    b.input("pooled", TP::FLOAT, {"batch", "768"});
    b.init("pool.w", TP::FLOAT, {768, 768});
    b.init("pool.b", TP::FLOAT, {768});
    auto* gemm = b.node("FusedGemm", "FusedGemm_0", {"pooled", "pool.w", "pool.b"}, {"pool_out"});
    intAttr(gemm, "transB", 1);
    floatAttr(gemm, "alpha", 1.0f);
    floatAttr(gemm, "beta", 1.0f);
    stringAttr(gemm, "activation", "Tanh");
    // Outputs declared with their rank only: the dims are inferred.
    b.output("dw_out", TP::FLOAT, {"?", "?", "?", "?"});
    for (const char* name : {"scores", "scores_t", "vq"})
        b.output(name, TP::FLOAT, {"?", "?", "?", "?"});
    b.output("pool_out", TP::FLOAT, {"?", "?"});
    return b.model();
}

TEST(MicrosoftOpSchemas, OrtExtendedFusedProductsPassWithShapesAndCounts) {
    const auto model = ortExtendedProducts();
    dumpIfAsked(model, "ort_extended_products");
    const CheckerVerdict verdict = runChecker(model);
    EXPECT_TRUE(verdict.ok) << verdict.message;
    const std::map<std::string, std::int64_t> expected{{"com.microsoft::FusedConv", 2},
                                                       {"com.microsoft::FusedGemm", 1},
                                                       {"com.microsoft::FusedMatMul", 3}};
    EXPECT_EQ(verdict.checkedByOnnxlensSchemas, expected);
    const auto shapes = inferShapes(model);
    const auto summary = summarizeShapeInference(model, *shapes);
    EXPECT_TRUE(summary.ok) << summary.message;
    EXPECT_EQ(summary.knownEdges, summary.totalEdges);
    // (17 + 2 - 3) / 2 + 1 = 9, (15 + 2 - 3) / 2 + 1 = 8.
    EXPECT_EQ(dimsText(*shapes, "conv_out"), "1:[N][8][9][8]");
    EXPECT_EQ(dimsText(*shapes, "dw_out"), "1:[N][8][9][8]");
    EXPECT_EQ(dimsText(*shapes, "scores"), "1:[batch][12][sequence][sequence]");
    // [s, b, 12, 64] read as [b, 12, s, 64]; [64, b, 12, s] as [b, 12, 64, s].
    EXPECT_EQ(dimsText(*shapes, "scores_t"), "1:[batch][12][sequence][sequence]");
    // [64, s]^T x ([b, 12, s, 64]^T = [b, 12, 64, s]): [b, 12, s, s].
    EXPECT_EQ(dimsText(*shapes, "vq"), "1:[batch][12][sequence][sequence]");
    EXPECT_EQ(dimsText(*shapes, "pool_out"), "1:[batch][768]");

    const auto cost = computeModelCost(model, {{"N", 1}, {"batch", 2}, {"sequence", 5}});
    ASSERT_TRUE(cost) << cost.error().message;
    std::map<std::string, const NodeCost*> byName;
    for (const auto& n : cost->nodes) byName[n.name] = &n;
    // Conv: every output element is a dot product of 3 x 3 x 3; depthwise: 3 x 3.
    EXPECT_DOUBLE_EQ(byName.at("FusedConv_0")->figures.macs, 8.0 * 9 * 8 * 27);
    EXPECT_DOUBLE_EQ(byName.at("FusedConv_1")->figures.macs, 8.0 * 9 * 8 * 9);
    EXPECT_DOUBLE_EQ(byName.at("FusedMatMul_0")->figures.macs, 2.0 * 12 * 5 * 5 * 64);
    EXPECT_DOUBLE_EQ(byName.at("FusedMatMul_1")->figures.macs, 2.0 * 12 * 5 * 5 * 64);
    // transA: K is A's dim -2 (64), not its last (sequence).
    EXPECT_DOUBLE_EQ(byName.at("FusedMatMul_2")->figures.macs, 2.0 * 12 * 5 * 5 * 64);
    EXPECT_DOUBLE_EQ(byName.at("FusedGemm_0")->figures.macs, 2.0 * 768 * 768);
    EXPECT_DOUBLE_EQ(byName.at("FusedGemm_0")->figures.flops, 2 * 2.0 * 768 * 768 + 2.0 * 768);
    EXPECT_EQ(cost->nodesWithUnknownShapes, 0);
}

TEST(MicrosoftOpSchemas, FusedMatMulWithImpossibleTransBatchGetsNoShape) {
    Builder b(17);
    b.input("a", TP::FLOAT, {"3", "4"});
    b.input("c", TP::FLOAT, {"4", "5"});
    intAttr(b.node("FusedMatMul", "FusedMatMul_0", {"a", "c"}, {"y"}), "transBatchA", 1);
    auto* out = b.graph().add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
    const auto model = b.model();
    const auto shapes = inferShapes(model);
    EXPECT_EQ(dimsText(*shapes, "y"), "1:?");
}

// Weights of another rank than the input (found by fuzz_operator_attributes): onnx's Conv
// inference reads a kernel dim from each weight dim after the second and indexed its dilations
// (one per spatial dim of the input) with them, past their end. Conv and FusedConv (whose
// shapes are Conv's) now get no shape.
TEST(MicrosoftOpSchemas, ConvWeightsOfAnotherRankGetNoShapeAndNoCrash) {
    for (const std::string& domain : {std::string(kMicrosoftDomain), std::string()}) {
        Builder b(17);
        b.input("x", TP::FLOAT, {"0", "3", "4", "5"});
        b.init("w", TP::FLOAT, {1, 1, 1, 1, 1, 1, 1, 2});
        b.node(domain.empty() ? "Conv" : "FusedConv", "conv", {"x", "w"}, {"y"}, domain);
        auto* out = b.graph().add_output();
        out->set_name("y");
        out->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
        auto model = b.model();
        const auto summary = runShapeInference(model);
        EXPECT_LT(summary.knownEdges, summary.totalEdges) << domain;
    }
}

TEST(MicrosoftOpSchemas, HostileAttributesGetNoShapeAndNoCrash) {
    auto model = genaiDecoder();
    auto* g = model.mutable_graph();
    for (auto& node : *g->mutable_node()) {
        for (auto& a : *node.mutable_attribute()) {
            if (a.name() == "num_heads" || a.name() == "kv_num_heads" || a.name() == "N")
                a.set_i(-5);
            if (a.name() == "gather_axis") a.set_i(99);
        }
    }
    const auto summary = runShapeInference(model);
    EXPECT_LT(summary.knownEdges, summary.totalEdges);
    (void)computeModelCost(model, {});
}

}  // namespace
}  // namespace onnxlens
