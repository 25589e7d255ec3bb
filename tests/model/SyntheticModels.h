#pragma once
// Models built in code for the view-graph, layout and GUI tests and the open benchmark: a small
// CNN, and a transformer-like encoder whose node names carry PyTorch-style name scopes
// (`/encoder/layer.3/attention/self/query/MatMul`) and whose inputs have dynamic axes.
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace onnxlens::testing {

inline onnx::ValueInfoProto makeValueInfo(const std::string& name, int elemType,
                                          const std::vector<std::string>& dims) {
    onnx::ValueInfoProto info;
    info.set_name(name);
    auto* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elemType);
    auto* shape = tensor->mutable_shape();
    for (const auto& d : dims) {
        auto* dim = shape->add_dim();
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
            dim->set_dim_value(std::stoll(d));
        else
            dim->set_dim_param(d);
    }
    return info;
}

inline onnx::TensorProto makeFloatInitializer(const std::string& name,
                                              const std::vector<std::int64_t>& dims,
                                              float scale = 0.01f) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t count = 1;
    for (auto d : dims) {
        t.add_dims(d);
        count *= d;
    }
    std::string raw(static_cast<std::size_t>(count) * 4, '\0');
    for (std::int64_t i = 0; i < count; ++i) {
        float v = scale * static_cast<float>((i * 37) % 17 - 8);
        std::memcpy(raw.data() + i * 4, &v, 4);
    }
    t.set_raw_data(raw);
    return t;
}

inline onnx::TensorProto makeInt64Initializer(const std::string& name,
                                              const std::vector<std::int64_t>& values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t.add_int64_data(v);
    return t;
}

inline onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op, const std::string& name,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
}

inline void addIntsAttribute(onnx::NodeProto* node, const std::string& name,
                             const std::vector<std::int64_t>& values) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto v : values) a->add_ints(v);
}

inline void addIntAttribute(onnx::NodeProto* node, const std::string& name, std::int64_t value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

inline std::shared_ptr<onnx::ModelProto> makeModelShell(int opset = 13) {
    auto model = std::make_shared<onnx::ModelProto>();
    model->set_ir_version(8);
    model->set_producer_name("onnxlens-tests");
    auto* o = model->add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    return model;
}

// input[N,1,28,28] -> Conv(8,3x3) -> Relu -> MaxPool -> Flatten -> Gemm(10) -> Softmax.
// N is the dynamic axis "batch".
inline std::shared_ptr<onnx::ModelProto> makeSmallCnn() {
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    g.set_name("small_cnn");
    *g.add_input() = makeValueInfo("input", onnx::TensorProto::FLOAT, {"batch", "1", "28", "28"});
    *g.add_initializer() = makeFloatInitializer("conv.weight", {8, 1, 3, 3});
    *g.add_initializer() = makeFloatInitializer("conv.bias", {8});
    *g.add_initializer() = makeFloatInitializer("fc.weight", {10, 8 * 13 * 13});
    *g.add_initializer() = makeFloatInitializer("fc.bias", {10});
    auto* conv = addNode(g, "Conv", "conv1", {"input", "conv.weight", "conv.bias"}, {"conv_out"});
    addIntsAttribute(conv, "kernel_shape", {3, 3});
    addIntsAttribute(conv, "strides", {1, 1});
    addNode(g, "Relu", "relu1", {"conv_out"}, {"relu_out"});
    auto* pool = addNode(g, "MaxPool", "pool1", {"relu_out"}, {"pool_out"});
    addIntsAttribute(pool, "kernel_shape", {2, 2});
    addIntsAttribute(pool, "strides", {2, 2});
    auto* flatten = addNode(g, "Flatten", "flatten", {"pool_out"}, {"flat"});
    addIntAttribute(flatten, "axis", 1);
    auto* gemm = addNode(g, "Gemm", "fc", {"flat", "fc.weight", "fc.bias"}, {"logits"});
    addIntAttribute(gemm, "transB", 1);
    addNode(g, "Softmax", "softmax", {"logits"}, {"probabilities"});
    *g.add_output() = makeValueInfo("probabilities", onnx::TensorProto::FLOAT, {"batch", "10"});
    return model;
}

// A BERT-like encoder: `layers` layers of ~36 operators each, hidden size `hidden`, inputs
// [batch, sequence]. Weights are tiny (hidden 8) unless asked otherwise: the tests are about
// the graph, not the numbers.
inline std::shared_ptr<onnx::ModelProto> makeTransformerLike(int layers, int hidden = 8) {
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    g.set_name("transformer_like");
    *g.add_input() = makeValueInfo("input_ids", onnx::TensorProto::INT64, {"batch", "sequence"});
    const std::int64_t h = hidden, vocab = 32;
    *g.add_initializer() = makeFloatInitializer("embeddings.word_embeddings.weight", {vocab, h});
    addNode(g, "Gather", "/embeddings/word_embeddings/Gather",
            {"embeddings.word_embeddings.weight", "input_ids"}, {"/embeddings/Gather_output_0"});
    *g.add_initializer() = makeFloatInitializer("embeddings.LayerNorm.weight", {h});
    *g.add_initializer() = makeFloatInitializer("embeddings.LayerNorm.bias", {h});
    std::string x = "/embeddings/LayerNorm/output_0";
    {
        // LayerNormalization is opset 17; decompose as exporters targeting opset 13 do.
        std::string p = "/embeddings/LayerNorm/";
        auto* mean = addNode(g, "ReduceMean", p + "ReduceMean", {"/embeddings/Gather_output_0"},
                             {p + "mean"});
        addIntsAttribute(mean, "axes", {-1});
        addNode(g, "Sub", p + "Sub", {"/embeddings/Gather_output_0", p + "mean"}, {p + "centred"});
        addNode(g, "Mul", p + "Mul", {p + "centred", "embeddings.LayerNorm.weight"},
                {p + "scaled"});
        addNode(g, "Add", p + "Add", {p + "scaled", "embeddings.LayerNorm.bias"}, {x});
    }
    auto linear = [&](const std::string& scope, const std::string& in, std::int64_t inSize,
                      std::int64_t outSize, const std::string& weightName) {
        *g.add_initializer() = makeFloatInitializer(weightName + ".weight", {inSize, outSize});
        *g.add_initializer() = makeFloatInitializer(weightName + ".bias", {outSize});
        addNode(g, "MatMul", scope + "/MatMul", {in, weightName + ".weight"},
                {scope + "/MatMul_output_0"});
        addNode(g, "Add", scope + "/Add", {scope + "/MatMul_output_0", weightName + ".bias"},
                {scope + "/Add_output_0"});
        return scope + "/Add_output_0";
    };
    const std::int64_t heads = 2;
    *g.add_initializer() = makeInt64Initializer("shape_heads", {0, -1, heads, h / heads});
    *g.add_initializer() = makeInt64Initializer("shape_merge", {0, -1, h});
    for (int l = 0; l < layers; ++l) {
        std::string L = "/encoder/layer." + std::to_string(l);
        std::string w = "encoder.layer." + std::to_string(l);
        std::string att = L + "/attention/self";
        std::string q = linear(att + "/query", x, h, h, w + ".attention.self.query");
        std::string k = linear(att + "/key", x, h, h, w + ".attention.self.key");
        std::string v = linear(att + "/value", x, h, h, w + ".attention.self.value");
        auto heads4 = [&](const std::string& in, const std::string& tag,
                          std::vector<std::int64_t> perm) {
            addNode(g, "Reshape", att + "/Reshape_" + tag, {in, "shape_heads"},
                    {att + "/Reshape_" + tag + "_output_0"});
            auto* t = addNode(g, "Transpose", att + "/Transpose_" + tag,
                              {att + "/Reshape_" + tag + "_output_0"},
                              {att + "/Transpose_" + tag + "_output_0"});
            addIntsAttribute(t, "perm", perm);
            return att + "/Transpose_" + tag + "_output_0";
        };
        std::string qh = heads4(q, "q", {0, 2, 1, 3});
        std::string kh = heads4(k, "k", {0, 2, 3, 1});
        std::string vh = heads4(v, "v", {0, 2, 1, 3});
        addNode(g, "MatMul", att + "/MatMul", {qh, kh}, {att + "/scores"});
        auto* scale = g.add_initializer();
        *scale = makeFloatInitializer(w + ".attention.scale", {}, 0.5f);
        addNode(g, "Mul", att + "/Mul", {att + "/scores", w + ".attention.scale"},
                {att + "/scaled"});
        auto* softmax =
            addNode(g, "Softmax", att + "/Softmax", {att + "/scaled"}, {att + "/probs"});
        addIntAttribute(softmax, "axis", -1);
        addNode(g, "MatMul", att + "/MatMul_1", {att + "/probs", vh}, {att + "/context"});
        auto* t = addNode(g, "Transpose", att + "/Transpose_out", {att + "/context"},
                          {att + "/context_t"});
        addIntsAttribute(t, "perm", {0, 2, 1, 3});
        addNode(g, "Reshape", att + "/Reshape_out", {att + "/context_t", "shape_merge"},
                {att + "/merged"});
        std::string ao = linear(L + "/attention/output/dense", att + "/merged", h, h,
                                w + ".attention.output.dense");
        addNode(g, "Add", L + "/attention/output/Add", {ao, x}, {L + "/attention/output/residual"});
        std::string ln1 = L + "/attention/output/LayerNorm/";
        *g.add_initializer() = makeFloatInitializer(w + ".attention.output.LayerNorm.weight", {h});
        auto* m1 = addNode(g, "ReduceMean", ln1 + "ReduceMean", {L + "/attention/output/residual"},
                           {ln1 + "mean"});
        addIntsAttribute(m1, "axes", {-1});
        addNode(g, "Sub", ln1 + "Sub", {L + "/attention/output/residual", ln1 + "mean"},
                {ln1 + "centred"});
        addNode(g, "Mul", ln1 + "Mul", {ln1 + "centred", w + ".attention.output.LayerNorm.weight"},
                {ln1 + "output_0"});
        std::string inter = linear(L + "/intermediate/dense", ln1 + "output_0", h, 4 * h,
                                   w + ".intermediate.dense");
        addNode(g, "Relu", L + "/intermediate/intermediate_act_fn/Relu", {inter},
                {L + "/intermediate/act"});
        std::string out =
            linear(L + "/output/dense", L + "/intermediate/act", 4 * h, h, w + ".output.dense");
        addNode(g, "Add", L + "/output/Add", {out, ln1 + "output_0"}, {L + "/output/residual"});
        std::string ln2 = L + "/output/LayerNorm/";
        *g.add_initializer() = makeFloatInitializer(w + ".output.LayerNorm.weight", {h});
        auto* m2 =
            addNode(g, "ReduceMean", ln2 + "ReduceMean", {L + "/output/residual"}, {ln2 + "mean"});
        addIntsAttribute(m2, "axes", {-1});
        addNode(g, "Sub", ln2 + "Sub", {L + "/output/residual", ln2 + "mean"}, {ln2 + "centred"});
        addNode(g, "Mul", ln2 + "Mul", {ln2 + "centred", w + ".output.LayerNorm.weight"},
                {ln2 + "output_0"});
        x = ln2 + "output_0";
    }
    addNode(g, "Identity", "/pooler/Identity", {x}, {"last_hidden_state"});
    *g.add_output() = makeValueInfo("last_hidden_state", onnx::TensorProto::FLOAT, {});
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    return model;
}

// A flat chain-with-skips of `count` operators and no name scopes (Add/Relu/Mul...).
inline std::shared_ptr<onnx::ModelProto> makeFlatGraph(int count) {
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    g.set_name("flat");
    *g.add_input() = makeValueInfo("x", onnx::TensorProto::FLOAT, {"batch", "16"});
    std::vector<std::string> values = {"x"};
    const char* ops[] = {"Relu", "Add", "Mul", "Sigmoid", "Sub"};
    for (int i = 0; i < count; ++i) {
        std::string op = ops[i % 5];
        std::string out = "t" + std::to_string(i);
        const std::string& a = values.back();
        const std::string& b = values[values.size() > 3 ? values.size() - 3 : 0];
        if (op == "Relu" || op == "Sigmoid")
            addNode(g, op, op + "_" + std::to_string(i), {a}, {out});
        else
            addNode(g, op, op + "_" + std::to_string(i), {a, b}, {out});
        values.push_back(out);
    }
    *g.add_output() = makeValueInfo(values.back(), onnx::TensorProto::FLOAT, {"batch", "16"});
    return model;
}

// A decoder as PyTorch 1.13 exports one, in `layers` blocks `/layers.N/...`: an attention mask
// computed once at the top (`/mask/Unsqueeze`) and read by every layer; one LayerNorm weight
// shared through weight-sharing Identity nodes (`Identity_N` -> `layers.N.norm.weight`); a
// Reshape whose shape is a Cast of a Constant. Per layer: norm Mul, MatMul, mask Add, Reshape,
// residual Add (5 operators); at the top: Cast, Sub, Mul, Unsqueeze (4).
inline std::shared_ptr<onnx::ModelProto> makeMaskedDecoder(int layers, std::int64_t hidden = 8) {
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    g.set_name("masked_decoder");
    *g.add_input() =
        makeValueInfo("x", onnx::TensorProto::FLOAT, {"batch", "sequence", std::to_string(hidden)});
    *g.add_input() =
        makeValueInfo("attention_mask", onnx::TensorProto::INT64, {"batch", "sequence"});
    auto constant = [&](const std::string& name, const onnx::TensorProto& value) {
        auto* node = addNode(g, "Constant", name, {}, {name + "_output_0"});
        auto* a = node->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        *a->mutable_t() = value;
        return name + "_output_0";
    };
    auto cast = addNode(g, "Cast", "/mask/Cast", {"attention_mask"}, {"/mask/Cast_output_0"});
    addIntAttribute(cast, "to", onnx::TensorProto::FLOAT);
    const std::string one = constant("/mask/Constant", makeFloatInitializer("", {}, 1.0f));
    addNode(g, "Sub", "/mask/Sub", {one, "/mask/Cast_output_0"}, {"/mask/Sub_output_0"});
    const std::string big = constant("/mask/Constant_1", makeFloatInitializer("", {}, -1e4f));
    addNode(g, "Mul", "/mask/Mul", {"/mask/Sub_output_0", big}, {"/mask/Mul_output_0"});
    const std::string axes = constant("/mask/Constant_2", makeInt64Initializer("", {2}));
    addNode(g, "Unsqueeze", "/mask/Unsqueeze", {"/mask/Mul_output_0", axes}, {"mask"});
    *g.add_initializer() = makeFloatInitializer("shared.norm.weight", {hidden});
    std::string x = "x";
    for (int l = 0; l < layers; ++l) {
        const std::string L = "/layers." + std::to_string(l);
        const std::string weight = "layers." + std::to_string(l) + ".norm.weight";
        addNode(g, "Identity", "Identity_" + std::to_string(l), {"shared.norm.weight"}, {weight});
        addNode(g, "Mul", L + "/norm/Mul", {x, weight}, {L + "/norm/Mul_output_0"});
        const std::string matrix = "layers." + std::to_string(l) + ".attention.weight";
        *g.add_initializer() = makeFloatInitializer(matrix, {hidden, hidden});
        addNode(g, "MatMul", L + "/attention/MatMul", {L + "/norm/Mul_output_0", matrix},
                {L + "/attention/MatMul_output_0"});
        addNode(g, "Add", L + "/attention/Add", {L + "/attention/MatMul_output_0", "mask"},
                {L + "/attention/Add_output_0"});
        onnx::TensorProto shape;
        shape.set_data_type(onnx::TensorProto::INT32);
        shape.add_dims(3);
        for (std::int32_t v : {0, -1, static_cast<std::int32_t>(hidden)}) shape.add_int32_data(v);
        const std::string shape32 = constant(L + "/Constant", shape);
        auto* toInt64 = addNode(g, "Cast", L + "/Cast", {shape32}, {L + "/Cast_output_0"});
        addIntAttribute(toInt64, "to", onnx::TensorProto::INT64);
        addNode(g, "Reshape", L + "/Reshape", {L + "/attention/Add_output_0", L + "/Cast_output_0"},
                {L + "/Reshape_output_0"});
        addNode(g, "Add", L + "/Add", {L + "/Reshape_output_0", x}, {L + "/Add_output_0"});
        x = L + "/Add_output_0";
    }
    *g.add_output() =
        makeValueInfo(x, onnx::TensorProto::FLOAT, {"batch", "sequence", std::to_string(hidden)});
    return model;
}

}  // namespace onnxlens::testing
