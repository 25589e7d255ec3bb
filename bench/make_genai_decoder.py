#!/usr/bin/python3
"""Writes a decoder in the layout onnxruntime-genai's model builder writes for CPU int4.

usage: make_genai_decoder.py OUT_DIR [--hidden 2048] [--layers 8] [--heads 32] [--kv-heads 8]
                             [--intermediate 5632] [--vocab 32000] [--max-positions 4096]
                             [--block-size 32] [--asymmetric] [--seed 0] [--qkv packed|separate]

Random seeded weights (nothing is downloaded); the graph is the builder's, node for node:
  input_ids [batch_size, sequence_length] int64, attention_mask [batch_size,
  total_sequence_length] int64, past_key_values.N.key/value [batch_size, kv_heads,
  past_sequence_length, head_size] float32
  -> logits [batch_size, sequence_length, vocab], present.N.key/value [batch_size, kv_heads,
  total_sequence_length, head_size]
  * embedding: Gather of a float table (the builder keeps it float on CPU int4)
  * seqlens_k = Cast<int32>(ReduceSum(attention_mask, axis 1) - 1); total_sequence_length =
    Cast<int32>(Gather(Shape(attention_mask), 1))
  * each layer: SimplifiedLayerNormalization (first layer) or SkipSimplifiedLayerNormalization
    (the others: the residual sum is its fourth output), one MatMulNBits for packed Q, K and V
    (or three with --qkv separate), GroupQueryAttention with do_rotary and cos/sin caches,
    MatMulNBits o_proj, SkipSimplifiedLayerNormalization, MatMulNBits gate and up, SiLU as
    Sigmoid and Mul, Mul, MatMulNBits down
  * final SkipSimplifiedLayerNormalization, MatMulNBits lm_head (int4)
MatMulNBits weights: B [N, k_blocks, block_size / 2] uint8 (two 4-bit values a byte, the lower
nibble first), scales [N * k_blocks] float, zero points (only with --asymmetric) [N *
ceil(k_blocks / 2)] uint8 packed the same way; symmetric quantization leaves them out (8 is the
default zero point). Weights over 1 KB go to OUT_DIR/model.onnx.data (external data).

With --tiny, a 2-layer model of hidden 64 (for tests and quick checks).
Also writes OUT_DIR/genai_config.json-like facts to OUT_DIR/decoder.json (dims, names).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_int4(weight, block_size, asymmetric):
    """weight [K, N] float -> (B [N, k_blocks, block_size/2] uint8, scales, zero points or None)."""
    k, n = weight.shape
    k_blocks = (k + block_size - 1) // block_size
    padded = np.zeros((k_blocks * block_size, n), np.float32)
    padded[:k] = weight
    blocks = padded.T.reshape(n, k_blocks, block_size)  # [N, k_blocks, block]
    if asymmetric:
        lo = np.minimum(blocks.min(axis=2), 0.0)
        hi = np.maximum(blocks.max(axis=2), 0.0)
        scales = (hi - lo) / 15.0
        scales[scales == 0] = 1.0
        zero = np.clip(np.round(-lo / scales), 0, 15).astype(np.uint8)
    else:
        amax = np.abs(blocks).max(axis=2)
        scales = amax / 7.0
        scales[scales == 0] = 1.0
        zero = np.full((n, k_blocks), 8, np.uint8)
    q = np.clip(np.round(blocks / scales[:, :, None]) + zero[:, :, None], 0, 15).astype(np.uint8)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    zero_packed = None
    if asymmetric:
        zp = zero
        if k_blocks % 2:
            zp = np.concatenate([zp, np.zeros((n, 1), np.uint8)], axis=1)
        zero_packed = (zp[:, 0::2] | (zp[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    return packed, scales.astype(np.float32).reshape(-1), zero_packed


class Builder:
    def __init__(self, args):
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        self.nodes, self.inits = [], []

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, outputs, name, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        return outputs

    def matmul_nbits(self, name, x, k, n, std):
        weight = (self.rng.standard_normal((k, n)) * std).astype(np.float32)
        packed, scales, zero = quantize_int4(weight, self.args.block_size, self.args.asymmetric)
        inputs = [x, self.init(f"{name}.weight_Q4", packed), self.init(f"{name}.weight_scales", scales)]
        if zero is not None:
            inputs.append(self.init(f"{name}.weight_zp", zero))
        return self.node("MatMulNBits", inputs, [f"{name}/output_0"], f"{name}/MatMulNBits",
                         "com.microsoft", K=k, N=n, bits=4, block_size=self.args.block_size,
                         accuracy_level=self.args.accuracy_level)[0]

    def norm_weight(self, name, hidden):
        return self.init(name, (1.0 + 0.1 * self.rng.standard_normal(hidden)).astype(np.float32))


def build(args):
    a = args
    head = a.hidden // a.heads
    b = Builder(a)
    eps = 1e-6
    # Graph inputs (names and symbolic dims as the builder writes them).
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                      ["batch_size", "total_sequence_length"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch_size", "sequence_length", a.vocab])]
    for i in range(a.layers):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(
                f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                ["batch_size", a.kv_heads, "past_sequence_length", head]))
            outputs.append(helper.make_tensor_value_info(
                f"present.{i}.{kv}", TensorProto.FLOAT,
                ["batch_size", a.kv_heads, "total_sequence_length", head]))
    # Embedding.
    table = (b.rng.standard_normal((a.vocab, a.hidden)) * 0.02).astype(np.float32)
    x = b.node("Gather", [b.init("model.embed_tokens.weight", table), "input_ids"],
               ["/model/embed_tokens/Gather/output_0"], "/model/embed_tokens/Gather")[0]
    # seqlens_k and total_sequence_length from the mask.
    b.init("/model/constants/TensorProto.INT64/1D/1", np.array([1], np.int64))
    b.init("/model/constants/TensorProto.INT64/0D/1", np.array(1, np.int64))
    b.node("ReduceSum", ["attention_mask", "/model/constants/TensorProto.INT64/1D/1"],
           ["/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum/output_0"],
           "/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum", keepdims=0)
    b.node("Sub", ["/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum/output_0",
                   "/model/constants/TensorProto.INT64/0D/1"],
           ["/model/attn_mask_reformat/attn_mask_subgraph/Sub/output_0"],
           "/model/attn_mask_reformat/attn_mask_subgraph/Sub")
    seqlens = b.node("Cast", ["/model/attn_mask_reformat/attn_mask_subgraph/Sub/output_0"],
                     ["/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0"],
                     "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast", to=TensorProto.INT32)[0]
    b.node("Shape", ["attention_mask"], ["/model/attn_mask_reformat/attn_mask_subgraph/Shape/output_0"],
           "/model/attn_mask_reformat/attn_mask_subgraph/Shape")
    b.node("Gather", ["/model/attn_mask_reformat/attn_mask_subgraph/Shape/output_0",
                      "/model/constants/TensorProto.INT64/0D/1"],
           ["/model/attn_mask_reformat/attn_mask_subgraph/Gather/output_0"],
           "/model/attn_mask_reformat/attn_mask_subgraph/Gather", axis=0)
    total = b.node("Cast", ["/model/attn_mask_reformat/attn_mask_subgraph/Gather/output_0"],
                   ["/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0"],
                   "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast", to=TensorProto.INT32)[0]
    # Rotary caches [max_positions, head / 2].
    inv = 1.0 / (10000.0 ** (np.arange(0, head, 2, dtype=np.float64) / head))
    freqs = np.outer(np.arange(a.max_positions, dtype=np.float64), inv)
    b.init("cos_cache", np.cos(freqs).astype(np.float32))
    b.init("sin_cache", np.sin(freqs).astype(np.float32))

    residual = None
    std = 1.0 / np.sqrt(a.hidden)
    for i in range(a.layers):
        p = f"/model/layers.{i}"
        w = b.norm_weight(f"model.layers.{i}.input_layernorm.weight", a.hidden)
        if residual is None:
            normed = b.node("SimplifiedLayerNormalization", [x, w],
                            [f"{p}/input_layernorm/output_0"],
                            f"{p}/input_layernorm/LayerNorm", axis=-1, epsilon=eps, stash_type=1)[0]
            residual = x
        else:
            outs = b.node("SkipSimplifiedLayerNormalization", [x, residual, w],
                          [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"],
                          f"{p}/input_layernorm/SkipLayerNorm", "com.microsoft", epsilon=eps)
            normed, residual = outs[0], outs[3]
        q_size, kv_size = a.heads * head, a.kv_heads * head
        if a.qkv == "packed":
            qkv = b.matmul_nbits(f"{p}/attn/qkv_proj", normed, a.hidden, q_size + 2 * kv_size, std)
            gqa_in = [qkv, "", ""]
        else:
            gqa_in = [b.matmul_nbits(f"{p}/attn/q_proj", normed, a.hidden, q_size, std),
                      b.matmul_nbits(f"{p}/attn/k_proj", normed, a.hidden, kv_size, std),
                      b.matmul_nbits(f"{p}/attn/v_proj", normed, a.hidden, kv_size, std)]
        attn = b.node("GroupQueryAttention",
                      gqa_in + [f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens,
                                total, "cos_cache", "sin_cache"],
                      [f"{p}/attn/GroupQueryAttention/output_0", f"present.{i}.key",
                       f"present.{i}.value"],
                      f"{p}/attn/GroupQueryAttention", "com.microsoft", num_heads=a.heads,
                      kv_num_heads=a.kv_heads, scale=float(1.0 / np.sqrt(head)),
                      local_window_size=-1, softcap=0.0, do_rotary=1, rotary_interleaved=0)[0]
        o = b.matmul_nbits(f"{p}/attn/o_proj", attn, q_size, a.hidden, std)
        w2 = b.norm_weight(f"model.layers.{i}.post_attention_layernorm.weight", a.hidden)
        outs = b.node("SkipSimplifiedLayerNormalization", [o, residual, w2],
                      [f"{p}/post_attention_layernorm/output_0", "", "",
                       f"{p}/post_attention_layernorm/output_3"],
                      f"{p}/post_attention_layernorm/SkipLayerNorm", "com.microsoft", epsilon=eps)
        normed, residual = outs[0], outs[3]
        gate = b.matmul_nbits(f"{p}/mlp/gate_proj", normed, a.hidden, a.intermediate, std)
        up = b.matmul_nbits(f"{p}/mlp/up_proj", normed, a.hidden, a.intermediate, std)
        sig = b.node("Sigmoid", [gate], [f"{p}/mlp/act_fn/Sigmoid/output_0"], f"{p}/mlp/act_fn/Sigmoid")[0]
        silu = b.node("Mul", [gate, sig], [f"{p}/mlp/act_fn/Mul/output_0"], f"{p}/mlp/act_fn/Mul")[0]
        prod = b.node("Mul", [silu, up], [f"{p}/mlp/Mul/output_0"], f"{p}/mlp/Mul")[0]
        x = b.matmul_nbits(f"{p}/mlp/down_proj", prod, a.intermediate, a.hidden,
                           1.0 / np.sqrt(a.intermediate))
    wf = b.norm_weight("model.norm.weight", a.hidden)
    outs = b.node("SkipSimplifiedLayerNormalization", [x, residual, wf],
                  ["/model/norm/output_0", "", "", "/model/norm/output_3"],
                  "/model/norm/SkipLayerNorm", "com.microsoft", epsilon=eps)
    logits_in = outs[0]
    logits = b.matmul_nbits("/lm_head", logits_in, a.hidden, a.vocab, std)
    b.node("Identity", [logits], ["logits"], "/lm_head/Identity")
    graph = helper.make_graph(b.nodes, "main_graph", inputs, outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="onnxruntime-genai-layout (onnxlens bench)")
    model.ir_version = 8
    return model, head


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--intermediate", type=int, default=5632)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-positions", type=int, default=4096)
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--accuracy-level", type=int, default=4)
    ap.add_argument("--asymmetric", action="store_true")
    ap.add_argument("--qkv", choices=["packed", "separate"], default="packed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--manifest", help="also write the manifest bench/compare_decode_ort.py reads")
    args = ap.parse_args()
    if args.tiny:
        args.hidden, args.layers, args.heads, args.kv_heads = 64, 2, 4, 2
        args.intermediate, args.vocab, args.max_positions = 128, 256, 256
    model, head = build(args)
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "model.onnx")
    data = "model.onnx.data"
    if os.path.exists(os.path.join(args.out_dir, data)):
        os.remove(os.path.join(args.out_dir, data))
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)
    facts = {"hidden": args.hidden, "layers": args.layers, "heads": args.heads,
             "kv_heads": args.kv_heads, "head_size": head, "intermediate": args.intermediate,
             "vocab": args.vocab, "max_positions": args.max_positions,
             "block_size": args.block_size, "asymmetric": args.asymmetric, "qkv": args.qkv}
    with open(os.path.join(args.out_dir, "decoder.json"), "w") as f:
        json.dump(facts, f, indent=1)
    if args.manifest:
        # Weights as the float model has them (int4 MatMulNBits counted by their N x K):
        # embedding, per layer packed QKV, output projection, SiLU MLP and two norms, final
        # norm and lm_head.
        per_layer = (args.hidden * (args.heads + 2 * args.kv_heads) * head
                     + args.heads * head * args.hidden + 3 * args.hidden * args.intermediate
                     + 2 * args.hidden)
        parameters = 2 * args.vocab * args.hidden + args.layers * per_layer + args.hidden
        cache = [{"past": f"past_key_values.{i}.{kv}", "present": f"present.{i}.{kv}",
                  "shape": [1, args.kv_heads, 0, head], "past_axis": 2, "batch_axis": 0}
                 for i in range(args.layers) for kv in ("key", "value")]
        with open(args.manifest, "w") as f:
            json.dump({"model": os.path.abspath(path), "kind": "genai", "vocab": args.vocab,
                       "parameters": parameters,
                       "positions": args.max_positions, "input_ids": "input_ids",
                       "attention_mask": "attention_mask", "logits": "logits", "cache": cache}, f, indent=1)
    print(path)


if __name__ == "__main__":
    main()
