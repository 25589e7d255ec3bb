#!/usr/bin/python3
"""Writes a deep, narrow transformer exported by PyTorch, the kind of file that is hard to draw.

usage: make_big_transformer.py OUT.onnx [--layers N] [--d-model D] [--opset K] [--no-scopes]

A decoder-only transformer with random seeded weights: token embedding, learned positions,
N pre-norm layers (multi-head self-attention with an additive attention mask that every layer
reads, a GELU MLP), a final LayerNorm and a tied output projection (the embedding matrix read
twice). PyTorch 1.13's exporter turns it into what the graph view has to cope with:
Constant/Unsqueeze/Concat chains for every reshape (batch and sequence are dynamic axes),
LayerNorm weights deduplicated into weight-sharing Identity nodes, one mask tensor read by all
layers. Hidden size 64 keeps a 96-layer file around 20 MB. The files are made, not committed.
"""
import argparse
import math
import os

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask):
        b, s, d = x.shape
        h = self.heads

        def split(t):
            return t.reshape(b, s, h, d // h).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h) + mask
        context = torch.softmax(scores, dim=-1) @ v
        return self.out(context.transpose(1, 2).reshape(b, s, d))


class Layer(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = Attention(d_model, heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, 4 * d_model)
        self.down = nn.Linear(4 * d_model, d_model)

    def forward(self, x, mask):
        x = x + self.attention(self.norm1(x), mask)
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


class Decoder(nn.Module):
    def __init__(self, layers, d_model, heads, vocab, positions):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(positions, d_model)
        self.layers = nn.ModuleList(Layer(d_model, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, ids, attention_mask):
        s = ids.shape[1]
        positions = torch.arange(s, device=ids.device).unsqueeze(0)
        x = self.embed(ids) + self.position(positions)
        causal = torch.triu(torch.full((s, s), -1e4), diagonal=1)
        padding = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e4
        mask = causal + padding  # one tensor, read by every layer
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x) @ self.embed.weight.t()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=96)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--opset", type=int, default=14)
    parser.add_argument("--no-scopes", action="store_true",
                        help="rename every node OpType_N, as older exporters did")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder(args.layers, args.d_model, args.heads, args.vocab, 256).eval()
    ids = torch.randint(0, args.vocab, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.int64)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), args.out, input_names=["input_ids", "attention_mask"],
                          output_names=["logits"], opset_version=args.opset,
                          dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                        "attention_mask": {0: "batch", 1: "sequence"},
                                        "logits": {0: "batch", 1: "sequence"}})
    import onnx
    from collections import Counter
    model = onnx.load(args.out, load_external_data=False)
    graph = model.graph
    if args.no_scopes:
        for i, node in enumerate(graph.node):
            node.name = f"{node.op_type}_{i}"
        onnx.save(model, args.out)
    ops = Counter(n.op_type for n in graph.node)
    print(f"{args.out}: {len(graph.node)} nodes "
          + ", ".join(f"{k} {v}" for k, v in ops.most_common(6)))


if __name__ == "__main__":
    main()
