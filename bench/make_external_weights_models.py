#!/usr/bin/python3
"""Writes the two models of issue 25 (weights in external data files), made here, never committed.

usage: make_external_weights_models.py embedding|decoder [--out DIR]

embedding: an embedding table of 600,000 x 1,024 float32 (2.46 GB) in one external file,
    `embedding.onnx.data` (offset 0), read by Gather with 32 int64 row indices per run, then
    ReduceMean over each row: out[i] = mean(table[ids[i], :]). Written with numpy and onnx.helper;
    the table is generated and appended in chunks so the script never holds it in memory.
decoder: an LLM-shaped decoder of 1.16 billion parameters (vocabulary 32,000, hidden 2,048,
    20 layers of multi-head causal self-attention with 16 heads and a SwiGLU MLP of 5,632,
    RMSNorm, learned positions, an untied output projection) with random weights, exported by
    PyTorch; the exporter writes every weight to its own file beside the model (the model is over
    2 GB). Weights are kept as [in, out] matrices multiplied with `x @ W`, so the exporter has no
    transposes to fold (no second copy of 4.6 GB while exporting). Input: 32 token ids.

Each model's folder also gets `inputs/*.npy` and `manifest.json` ({"model", "inputs"}) in the
format of bench/make_bench_models.py, which bench/compare_external_weights.py reads.
Default folder: $ONNXLENS_BENCH_CACHE or ~/.cache/onnxlens-bench, subfolder external/<name>.
"""
import argparse
import json
import math
import os

import numpy as np

ROWS, WIDTH, IDS = 600_000, 1_024, 32


def cache_dir():
    return os.environ.get("ONNXLENS_BENCH_CACHE",
                          os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                                       "onnxlens-bench"))


def write_manifest(folder, model, inputs):
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    entries = []
    for name, value in inputs.items():
        file = os.path.join(folder, "inputs", name + ".npy")
        np.save(file, value)
        entries.append({"name": name, "file": file})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"model": model, "inputs": entries}, f, indent=1)


def make_embedding(folder):
    import onnx
    from onnx import TensorProto, helper

    os.makedirs(folder, exist_ok=True)
    model_file = os.path.join(folder, "embedding.onnx")
    data_name = "embedding.onnx.data"
    rng = np.random.default_rng(25)
    with open(os.path.join(folder, data_name), "wb") as f:
        chunk = 20_000
        for start in range(0, ROWS, chunk):
            rows = min(chunk, ROWS - start)
            f.write(rng.standard_normal((rows, WIDTH), dtype=np.float32).tobytes())
    init = TensorProto()
    init.name = "table"
    init.data_type = TensorProto.FLOAT
    init.dims.extend([ROWS, WIDTH])
    init.data_location = TensorProto.EXTERNAL
    for key, value in (("location", data_name), ("offset", "0"), ("length", str(ROWS * WIDTH * 4))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0),
         helper.make_node("ReduceMean", ["rows"], ["mean"], axes=[1], keepdims=0)],
        "embedding_lookup",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [IDS])],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, [IDS])],
        initializer=[init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="make_external_weights_models.py")
    onnx.save(model, model_file)
    ids = np.random.default_rng(7).integers(0, ROWS, IDS, dtype=np.int64)
    write_manifest(folder, model_file, {"ids": ids})
    return model_file


def make_decoder(folder, layers=20, hidden=2048, heads=16, mlp=5632, vocab=32000, positions=2048,
                 sequence=32):
    import torch
    from torch import nn

    def matrix(rows, cols):
        return nn.Parameter(torch.empty(rows, cols).normal_(0.0, 0.02), requires_grad=False)

    class RmsNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden), requires_grad=False)

        def forward(self, x):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * self.weight

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm = RmsNorm()
            self.wq, self.wk, self.wv, self.wo = (matrix(hidden, hidden) for _ in range(4))
            self.mlp_norm = RmsNorm()
            self.w_gate, self.w_up = matrix(hidden, mlp), matrix(hidden, mlp)
            self.w_down = matrix(mlp, hidden)

        def forward(self, x, mask):
            b, s, d = x.shape
            h = self.attn_norm(x)

            def split(t):
                return t.reshape(b, s, heads, d // heads).transpose(1, 2)

            q, k, v = split(h @ self.wq), split(h @ self.wk), split(h @ self.wv)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // heads) + mask
            context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
            x = x + context @ self.wo
            h = self.mlp_norm(x)
            return x + (nn.functional.silu(h @ self.w_gate) * (h @ self.w_up)) @ self.w_down

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = matrix(vocab, hidden)
            self.positions = matrix(positions, hidden)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.norm = RmsNorm()
            self.lm_head = matrix(hidden, vocab)
            mask = torch.full((sequence, sequence), -1e9).triu(1)
            self.register_buffer("mask", mask)

        def forward(self, ids):
            s = ids.shape[1]
            x = self.tokens[ids] + self.positions[:s]
            for layer in self.layers:
                x = layer(x, self.mask)
            return self.norm(x) @ self.lm_head

    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(25)
    with torch.no_grad():
        model = Decoder().eval()
        count = sum(p.numel() for p in model.parameters())
        print("decoder: %.3f billion parameters" % (count / 1e9))
        ids = torch.randint(0, vocab, (1, sequence), dtype=torch.int64)
        model_file = os.path.join(folder, "decoder.onnx")
        torch.onnx.export(model, (ids,), model_file, opset_version=14, input_names=["input_ids"],
                          output_names=["logits"], do_constant_folding=True)
    write_manifest(folder, model_file, {"input_ids": ids.numpy()})
    return model_file


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("which", choices=["embedding", "decoder"])
    parser.add_argument("--out", help="folder (default: the bench cache's external/<name>)")
    parser.add_argument("--layers", type=int, default=20, help="decoder layers (default 20)")
    args = parser.parse_args()
    folder = args.out or os.path.join(cache_dir(), "external", args.which)
    if args.which == "embedding":
        print(make_embedding(folder))
    else:
        print(make_decoder(folder, layers=args.layers))


if __name__ == "__main__":
    main()
