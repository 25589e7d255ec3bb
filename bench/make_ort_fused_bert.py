#!/usr/bin/python3
"""A BERT-base encoder in the layout ONNX Runtime's transformer optimizer writes for CPU
(`onnxruntime.transformers.optimizer`, model_type "bert"), written here with onnx.helper (issue 29):

    input_ids, token_type_ids, attention_mask (int64) -> Cast to int32 (the optimizer's casts)
      -> com.microsoft EmbedLayerNormalization (word, position and segment embeddings, LayerNorm;
         mask_index [batch] from the mask)
      -> 12 x [ com.microsoft Attention (packed QKV weights [768, 2304] and bias, mask_index, 12 heads)
               -> MatMul (output projection)
               -> com.microsoft SkipLayerNormalization (residual, gamma, beta, the projection's bias)
               -> MatMul -> com.microsoft BiasGelu -> MatMul
               -> com.microsoft SkipLayerNormalization ]
      -> last_hidden_state; the pooler: Gather(position 0) -> Gemm -> Tanh -> pooler_output

Weights are seeded random (normal, std 0.02, as BERT's initialisation; LayerNorm gamma near 1).
The inputs: seeded token ids, token types 0 then 1, a mask of ones with the last 8 positions 0.

usage: make_ort_fused_bert.py OUT_DIR [--layers 12] [--hidden 768] [--heads 12]
                              [--intermediate 3072] [--vocab 30522] [--sequence 128] [--seed 0]
Writes OUT_DIR/model.onnx, OUT_DIR/<input>.npy and OUT_DIR/manifest.json ({"model", "inputs"}: what
bench/ort_bench.mjs and `onnxlens-cli bench --input` read).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(args):
    rng = np.random.default_rng(args.seed)
    h, inter = args.hidden, args.intermediate
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(name, shape):
        return const(name, rng.normal(0, 0.02, shape).astype(np.float32))

    def gamma(name):
        return const(name, (1.0 + rng.normal(0, 0.02, h)).astype(np.float32))

    def beta(name):
        return const(name, rng.normal(0, 0.02, h).astype(np.float32))

    for name in ("input_ids", "token_type_ids", "attention_mask"):
        nodes.append(helper.make_node("Cast", [name], [name + "_int32"], name="Cast_" + name,
                                      to=TensorProto.INT32))
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids_int32", "token_type_ids_int32", weight("embeddings.word_embeddings.weight", (args.vocab, h)),
         weight("embeddings.position_embeddings.weight", (512, h)),
         weight("embeddings.token_type_embeddings.weight", (2, h)), gamma("embeddings.LayerNorm.weight"),
         beta("embeddings.LayerNorm.bias"), "attention_mask_int32"],
        ["embed_output", "mask_index"], name="EmbedLayerNormalization_0", domain="com.microsoft",
        epsilon=1e-12))
    x = "embed_output"
    for layer in range(args.layers):
        p = "encoder.layer.%d." % layer
        attention = "attention_output_%d" % layer
        nodes.append(helper.make_node(
            "Attention", [x, weight(p + "attention.qkv.weight", (h, 3 * h)),
                          weight(p + "attention.qkv.bias", (3 * h,)), "mask_index"],
            [attention], name="Attention_%d" % layer, domain="com.microsoft", num_heads=args.heads))
        projected = "attention_dense_%d" % layer
        nodes.append(helper.make_node("MatMul", [attention, weight(p + "attention.output.dense.weight", (h, h))],
                                      [projected], name="MatMul_attention_output_%d" % layer))
        normed = "attention_layernorm_%d" % layer
        nodes.append(helper.make_node(
            "SkipLayerNormalization", [projected, x, gamma(p + "attention.output.LayerNorm.weight"),
                                       beta(p + "attention.output.LayerNorm.bias"),
                                       weight(p + "attention.output.dense.bias", (h,))],
            [normed], name="SkipLayerNorm_attention_%d" % layer, domain="com.microsoft", epsilon=1e-12))
        up = "intermediate_dense_%d" % layer
        nodes.append(helper.make_node("MatMul", [normed, weight(p + "intermediate.dense.weight", (h, inter))],
                                      [up], name="MatMul_intermediate_%d" % layer))
        gelu = "intermediate_gelu_%d" % layer
        nodes.append(helper.make_node("BiasGelu", [up, weight(p + "intermediate.dense.bias", (inter,))], [gelu],
                                      name="BiasGelu_%d" % layer, domain="com.microsoft"))
        down = "output_dense_%d" % layer
        nodes.append(helper.make_node("MatMul", [gelu, weight(p + "output.dense.weight", (inter, h))], [down],
                                      name="MatMul_output_%d" % layer))
        out = "last_hidden_state" if layer == args.layers - 1 else "layer_output_%d" % layer
        nodes.append(helper.make_node(
            "SkipLayerNormalization", [down, normed, gamma(p + "output.LayerNorm.weight"),
                                       beta(p + "output.LayerNorm.bias"), weight(p + "output.dense.bias", (h,))],
            [out], name="SkipLayerNorm_output_%d" % layer, domain="com.microsoft", epsilon=1e-12))
        x = out
    nodes.append(helper.make_node("Gather", [x, const("pooler_index", np.int64(0))], ["pooler_first"],
                                  name="Gather_pooler", axis=1))
    nodes.append(helper.make_node("Gemm", ["pooler_first", weight("pooler.dense.weight", (h, h)),
                                           weight("pooler.dense.bias", (h,))], ["pooler_dense"],
                                  name="Gemm_pooler", transB=1))
    nodes.append(helper.make_node("Tanh", ["pooler_dense"], ["pooler_output"], name="Tanh_pooler"))

    dims = ["batch_size", "sequence_length"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
              for n in ("input_ids", "token_type_ids", "attention_mask")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [h]),
               helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch_size", h])]
    graph = helper.make_graph(nodes, "bert_ort_fused", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="bench/make_ort_fused_bert.py")
    model.ir_version = 8
    return model


def make_inputs(args):
    rng = np.random.default_rng(args.seed + 1)
    s = args.sequence
    mask = np.ones((1, s), dtype=np.int64)
    mask[0, max(1, s - 8):] = 0
    types = np.zeros((1, s), dtype=np.int64)
    types[0, s // 2:] = 1
    return {"input_ids": rng.integers(0, args.vocab, (1, s)).astype(np.int64), "token_type_ids": types,
            "attention_mask": mask}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--intermediate", type=int, default=3072)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--sequence", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model_path = os.path.join(args.out_dir, "model.onnx")
    onnx.save(build(args), model_path)
    entries = []
    for name, array in make_inputs(args).items():
        file = os.path.join(args.out_dir, name + ".npy")
        np.save(file, array)
        entries.append({"name": name, "file": file})
    with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
        json.dump({"model": model_path, "inputs": entries}, f, indent=1)
    print(model_path)


if __name__ == "__main__":
    main()
