#pragma once
// Toy decoders with a KV cache whose next token can be worked by hand (the tests of
// `onnxlens-cli generate`, DecoderModel and DecodeLoop).
//
// Every layer's key cache holds the token ids of the context and its value cache their position
// ids (each one float per token: [batch, 1, past, 1]; stacked [2, batch, 1, past, 1]). The logits
// of every position peak at
//     next = (sum of layer 0's keys + sum of the last layer's values + sum of the mask) mod V
// so after the prefill of a prompt p_0..p_{n-1}, and a context of L tokens c_0..c_{L-1},
//     next = (c_0 + ... + c_{L-1} + (0 + 1 + ... + L-1) + L) mod V
// which is right only when every present came back as the next past, the positions moved on
// and the mask grew. The ids also index an embedding table of V rows and the positions a table
// of `positions` rows (both zeros): the vocabulary and the longest context.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace onnxlens::testing {

enum class ToyLayout { Optimum, SplitKv, Stacked };

using ToyDim = std::variant<std::int64_t, std::string>;

inline void setType(onnx::ValueInfoProto* info, const std::string& name, int elem,
                    const std::vector<ToyDim>& dims) {
    info->set_name(name);
    auto* tt = info->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
        auto* dim = shape->add_dim();
        if (std::holds_alternative<std::int64_t>(d))
            dim->set_dim_value(std::get<std::int64_t>(d));
        else
            dim->set_dim_param(std::get<std::string>(d));
    }
}

inline onnx::NodeProto* toyNode(onnx::GraphProto* g, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + outputs.front());
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
}

inline void intsAttribute(onnx::NodeProto* n, const std::string& name,
                          const std::vector<std::int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto v : values) a->add_ints(v);
}

inline void intAttribute(onnx::NodeProto* n, const std::string& name, std::int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

inline void floatInitializer(onnx::GraphProto* g, const std::string& name,
                             const std::vector<std::int64_t>& dims,
                             const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
}

inline void int64Initializer(onnx::GraphProto* g, const std::string& name,
                             const std::vector<std::int64_t>& dims,
                             const std::vector<std::int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
}

struct ToyOptions {
    ToyLayout layout = ToyLayout::Optimum;
    int layers = 2;
    std::int64_t vocabulary = 7;
    std::int64_t positions = 16;
    bool attentionMask = true;
    bool positionIds = true;
    // A present that grows by two tokens per token (its shape disagrees with its past at run).
    bool presentGrowsTwice = false;
    // The declared present of layer 0 has 2 heads where its past has 1.
    bool presentDeclaredWrong = false;
};

// The cache names of layer `l`: {past key, past value, present key, present value} (stacked:
// only the first and third).
inline std::vector<std::string> toyCacheNames(ToyLayout layout, int l) {
    const std::string n = std::to_string(l);
    switch (layout) {
        case ToyLayout::Optimum:
            return {"past_key_values." + n + ".key", "past_key_values." + n + ".value",
                    "present." + n + ".key", "present." + n + ".value"};
        case ToyLayout::SplitKv:
            return {"past_k_" + n, "past_v_" + n, "present_k_" + n, "present_v_" + n};
        case ToyLayout::Stacked:
        default:
            return {"past." + n, "", "present." + n, ""};
    }
}

inline onnx::ModelProto toyDecoder(const ToyOptions& o = {}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("decoder-tests");
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("toy_decoder");
    const auto F = onnx::TensorProto::FLOAT;
    const auto I = onnx::TensorProto::INT64;
    setType(g->add_input(), "input_ids", I, {"batch_size", "sequence_length"});
    if (o.attentionMask)
        setType(g->add_input(), "attention_mask", I, {"batch_size", "total_sequence_length"});
    if (o.positionIds)
        setType(g->add_input(), "position_ids", I, {"batch_size", "sequence_length"});
    const bool stacked = o.layout == ToyLayout::Stacked;
    for (int l = 0; l < o.layers; ++l) {
        const auto names = toyCacheNames(o.layout, l);
        if (stacked) {
            setType(g->add_input(), names[0], F, {2, "batch_size", 1, "past_sequence_length", 1});
        } else {
            setType(g->add_input(), names[0], F, {"batch_size", 1, "past_sequence_length", 1});
            setType(g->add_input(), names[1], F, {"batch_size", 1, "past_sequence_length", 1});
        }
    }
    setType(g->add_output(), "logits", F, {"batch_size", "sequence_length", o.vocabulary});
    for (int l = 0; l < o.layers; ++l) {
        const auto names = toyCacheNames(o.layout, l);
        const std::int64_t heads = l == 0 && o.presentDeclaredWrong ? 2 : 1;
        if (stacked) {
            setType(g->add_output(), names[2], F,
                    {2, "batch_size", heads, "total_sequence_length", 1});
        } else {
            setType(g->add_output(), names[2], F,
                    {"batch_size", heads, "total_sequence_length", 1});
            setType(g->add_output(), names[3], F, {"batch_size", 1, "total_sequence_length", 1});
        }
    }

    floatInitializer(g, "embedding", {o.vocabulary, 1}, std::vector<float>(o.vocabulary, 0.f));
    floatInitializer(g, "position_table", {o.positions, 1}, std::vector<float>(o.positions, 0.f));
    std::vector<float> range;
    for (std::int64_t v = 0; v < o.vocabulary; ++v) range.push_back(static_cast<float>(v));
    floatInitializer(g, "vocab_range", {o.vocabulary}, range);
    floatInitializer(g, "vocab_size", {}, {static_cast<float>(o.vocabulary)});
    floatInitializer(g, "zero", {}, {0.f});
    floatInitializer(g, "two", {}, {2.f});
    int64Initializer(g, "axes_1_3", {2}, {1, 3});
    int64Initializer(g, "axes_0", {1}, {0});
    int64Initializer(g, "axes_2", {1}, {2});

    toyNode(g, "Cast", {"input_ids"}, {"ids_f"});
    intAttribute(g->mutable_node(g->node_size() - 1), "to", F);
    toyNode(g, "Unsqueeze", {"ids_f", "axes_1_3"}, {"new_key"});  // [b, 1, s, 1]
    if (o.positionIds) {
        toyNode(g, "Cast", {"position_ids"}, {"pos_f"});
        intAttribute(g->mutable_node(g->node_size() - 1), "to", F);
    } else {
        toyNode(g, "Mul", {"ids_f", "zero"}, {"pos_f"});
    }
    toyNode(g, "Unsqueeze", {"pos_f", "axes_1_3"}, {"new_value"});
    std::vector<std::string> keyOf(o.layers), valueOf(o.layers);
    for (int l = 0; l < o.layers; ++l) {
        const auto names = toyCacheNames(o.layout, l);
        const std::string L = std::to_string(l);
        if (stacked) {
            toyNode(g, "Unsqueeze", {"new_key", "axes_0"}, {"k_" + L});
            toyNode(g, "Unsqueeze", {"new_value", "axes_0"}, {"v_" + L});
            toyNode(g, "Concat", {"k_" + L, "v_" + L}, {"kv_" + L});
            intAttribute(g->mutable_node(g->node_size() - 1), "axis", 0);
            toyNode(g, "Concat", {names[0], "kv_" + L}, {names[2]});
            intAttribute(g->mutable_node(g->node_size() - 1), "axis", 3);
            // [2, b, 1, total, 1]: the key half and the value half.
            toyNode(g, "Split", {names[2]}, {"key_" + L, "value_" + L});
            intAttribute(g->mutable_node(g->node_size() - 1), "axis", 0);
            keyOf[l] = "key_" + L;
            valueOf[l] = "value_" + L;
        } else {
            std::vector<std::string> keyInputs = {names[0], "new_key"};
            if (o.presentGrowsTwice && l == 0) keyInputs.push_back("new_key");
            toyNode(g, "Concat", keyInputs, {names[2]});
            intAttribute(g->mutable_node(g->node_size() - 1), "axis", 2);
            toyNode(g, "Concat", {names[1], "new_value"}, {names[3]});
            intAttribute(g->mutable_node(g->node_size() - 1), "axis", 2);
            keyOf[l] = names[2];
            valueOf[l] = names[3];
        }
    }
    toyNode(g, "ReduceSum", {keyOf.front()}, {"sum_keys"});
    intAttribute(g->mutable_node(g->node_size() - 1), "keepdims", 0);
    toyNode(g, "ReduceSum", {valueOf.back()}, {"sum_values"});
    intAttribute(g->mutable_node(g->node_size() - 1), "keepdims", 0);
    toyNode(g, "Add", {"sum_keys", "sum_values"}, {"sum_cache"});
    if (o.attentionMask) {
        toyNode(g, "Cast", {"attention_mask"}, {"mask_f"});
        intAttribute(g->mutable_node(g->node_size() - 1), "to", F);
        toyNode(g, "ReduceSum", {"mask_f"}, {"sum_mask"});
        intAttribute(g->mutable_node(g->node_size() - 1), "keepdims", 0);
        toyNode(g, "Add", {"sum_cache", "sum_mask"}, {"total"});
    } else {
        toyNode(g, "Add", {"sum_cache", "zero"}, {"total"});
    }
    toyNode(g, "Mod", {"total", "vocab_size"}, {"target"});
    intAttribute(g->mutable_node(g->node_size() - 1), "fmod", 1);
    toyNode(g, "Sub", {"vocab_range", "target"}, {"offsets"});
    toyNode(g, "Pow", {"offsets", "two"}, {"squares"});
    toyNode(g, "Neg", {"squares"}, {"peak"});                          // [V], largest at `target`
    toyNode(g, "Gather", {"embedding", "input_ids"}, {"token_rows"});  // [b, s, 1] zeros
    if (o.positionIds) {
        toyNode(g, "Gather", {"position_table", "position_ids"}, {"pos_rows"});
        toyNode(g, "Add", {"token_rows", "pos_rows"}, {"rows"});
    } else {
        toyNode(g, "Identity", {"token_rows"}, {"rows"});
    }
    toyNode(g, "Add", {"rows", "peak"}, {"logits"});  // [b, s, V]
    return m;
}

// The ids the toy decoder generates (see above).
inline std::vector<std::int64_t> toyExpectedIds(const std::vector<std::int64_t>& prompt,
                                                int newTokens, std::int64_t vocabulary) {
    std::vector<std::int64_t> context = prompt, generated;
    for (int i = 0; i < newTokens; ++i) {
        std::int64_t sum = 0;
        const auto length = static_cast<std::int64_t>(context.size());
        for (std::int64_t k = 0; k < length; ++k) sum += context[static_cast<std::size_t>(k)] + k;
        sum += length;
        const std::int64_t next = sum % vocabulary;
        generated.push_back(next);
        context.push_back(next);
    }
    return generated;
}

}  // namespace onnxlens::testing
