#!/usr/bin/python3
"""Decoder models with an explicit KV cache, exported from PyTorch with random seeded weights, for
`onnxlens-cli generate` and its comparison with ONNX Runtime (issue 30; bench/compare_decode_ort.py).

  gpt2          GPT-2 style: token and position embeddings (Gather), pre-LayerNorm blocks of
                multi-head attention and a GELU MLP, tied LM head; inputs input_ids,
                attention_mask, position_ids, past_key_values.N.key/value [batch, heads, past,
                head_size]; outputs logits, present.N.key/value (the optimum names)
  gpt2_stacked  the same network with one stacked cache tensor per layer: past.N -> present.N,
                [2, batch, heads, past, head_size]
  llama         Llama style: RMSNorm, rotary embeddings from a cos/sin cache indexed by
                position_ids, SiLU-gated MLP, grouped kv heads (heads / kv_heads queries share
                one key/value head), untied LM head; past_k_N/past_v_N -> present_k_N/present_v_N

Sizes: tiny (vocab 96, hidden 32, 2 layers, 4 heads, 64 positions: the ORT agreement check) and
30m (vocab 32000, hidden 512, 6 layers, 8 heads, 1024 positions: the speed check; GPT-2 style
36 M parameters, Llama style 49 M with its untied head and 2 kv heads). Every model is exported with torch.onnx.export (opset 17, dynamic axes batch_size,
sequence_length, past_sequence_length, total_sequence_length) beside a manifest NAME.json that
names the inputs, the cache pairs and their shapes for bench/ort_decode.mjs.

usage: make_decoder_models.py [--size tiny|30m] [--seed N] [--kinds gpt2,gpt2_stacked,llama] OUT_DIR
Not committed: the comparison script makes them into its cache folder.
"""
import argparse
import json
import math
import os
import sys

SIZES = {
    "tiny": dict(vocab=96, hidden=32, layers=2, heads=4, kv_heads=2, positions=64, mlp=64),
    "30m": dict(vocab=32000, hidden=512, layers=6, heads=8, kv_heads=2, positions=1024, mlp=1376),
}
KINDS = ["gpt2", "gpt2_stacked", "llama"]


def build(kind, cfg):
    import torch
    from torch import nn

    hidden, heads, layers = cfg["hidden"], cfg["heads"], cfg["layers"]
    head_size = hidden // heads
    kv_heads = cfg["kv_heads"] if kind == "llama" else heads

    def causal_allowed(q_len, k_len, attention_mask):
        # Query i sits at absolute position past + i; it sees keys 0..past+i that the mask keeps.
        rows = torch.arange(q_len).unsqueeze(1) + (k_len - q_len)
        cols = torch.arange(k_len).unsqueeze(0)
        allowed = (cols <= rows).unsqueeze(0).unsqueeze(0)
        return allowed & (attention_mask[:, None, None, :] > 0)

    def attend(q, k, v, attention_mask):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(head_size)
        allowed = causal_allowed(q.shape[2], k.shape[2], attention_mask)
        scores = torch.where(allowed, scores, torch.full_like(scores, -1e9))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    class GptBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
            self.fc, self.out = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

        def forward(self, x, attention_mask, past_k, past_v):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(hidden, dim=2)
            q, k, v = (t.reshape(b, s, heads, head_size).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            a = attend(q, k, v, attention_mask).transpose(1, 2).reshape(b, s, hidden)
            x = x + self.proj(a)
            x = x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))
            return x, k, v

    class RmsNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    def rotate_half(x):
        x1, x2 = x[..., : head_size // 2], x[..., head_size // 2:]
        return torch.cat([-x2, x1], dim=-1)

    class LlamaBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RmsNorm(), RmsNorm()
            self.q = nn.Linear(hidden, hidden, bias=False)
            self.k = nn.Linear(hidden, kv_heads * head_size, bias=False)
            self.v = nn.Linear(hidden, kv_heads * head_size, bias=False)
            self.o = nn.Linear(hidden, hidden, bias=False)
            self.gate = nn.Linear(hidden, cfg["mlp"], bias=False)
            self.up = nn.Linear(hidden, cfg["mlp"], bias=False)
            self.down = nn.Linear(cfg["mlp"], hidden, bias=False)

        def forward(self, x, attention_mask, past_k, past_v, cos, sin):
            b, s, _ = x.shape
            h = self.n1(x)
            q = self.q(h).reshape(b, s, heads, head_size).transpose(1, 2)
            k = self.k(h).reshape(b, s, kv_heads, head_size).transpose(1, 2)
            v = self.v(h).reshape(b, s, kv_heads, head_size).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            t = k.shape[2]
            rep = heads // kv_heads
            kk = k[:, :, None].expand(b, kv_heads, rep, t, head_size).reshape(b, heads, t, head_size)
            vv = v[:, :, None].expand(b, kv_heads, rep, t, head_size).reshape(b, heads, t, head_size)
            a = attend(q, kk, vv, attention_mask).transpose(1, 2).reshape(b, s, hidden)
            x = x + self.o(a)
            h = self.n2(x)
            x = x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))
            return x, k, v

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab"], hidden)
            if kind == "llama":
                self.blocks = nn.ModuleList([LlamaBlock() for _ in range(layers)])
                self.norm = RmsNorm()
                self.head = nn.Linear(hidden, cfg["vocab"], bias=False)
                inv = 1.0 / (10000 ** (torch.arange(0, head_size, 2).float() / head_size))
                angles = torch.arange(cfg["positions"]).float()[:, None] * inv[None, :]
                angles = torch.cat([angles, angles], dim=-1)
                self.register_buffer("cos_cache", angles.cos())
                self.register_buffer("sin_cache", angles.sin())
            else:
                self.wpe = nn.Embedding(cfg["positions"], hidden)
                self.blocks = nn.ModuleList([GptBlock() for _ in range(layers)])
                self.norm = nn.LayerNorm(hidden)

        def forward(self, input_ids, attention_mask, position_ids, *past):
            x = self.wte(input_ids)
            presents = []
            if kind == "llama":
                cos = self.cos_cache[position_ids].unsqueeze(1)
                sin = self.sin_cache[position_ids].unsqueeze(1)
            else:
                x = x + self.wpe(position_ids)
            for i, block in enumerate(self.blocks):
                if kind == "gpt2_stacked":
                    pk, pv = past[i][0], past[i][1]
                else:
                    pk, pv = past[2 * i], past[2 * i + 1]
                if kind == "llama":
                    x, k, v = block(x, attention_mask, pk, pv, cos, sin)
                else:
                    x, k, v = block(x, attention_mask, pk, pv)
                if kind == "gpt2_stacked":
                    presents.append(torch.stack([k, v]))
                else:
                    presents += [k, v]
            x = self.norm(x)
            logits = self.head(x) if kind == "llama" else torch.matmul(x, self.wte.weight.t())
            return (logits, *presents)

    model = Decoder()
    # Products scaled by 1/sqrt(fan-in) (GPT-2's 0.02 would leave random logits too close to call)
    # and small embeddings, so that the tied head does not just repeat the last token: the logits
    # of random weights stay apart and the greedy choice does not hinge on rounding.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.1 if "wte" in name or "wpe" in name else 1.0 / math.sqrt(p.shape[-1]))
    model.eval()
    return model, head_size, kv_heads


def names(kind, layers):
    if kind == "gpt2_stacked":
        return [("past.%d" % i, "present.%d" % i) for i in range(layers)]
    if kind == "llama":
        pairs = []
        for i in range(layers):
            pairs += [("past_k_%d" % i, "present_k_%d" % i), ("past_v_%d" % i, "present_v_%d" % i)]
        return pairs
    pairs = []
    for i in range(layers):
        pairs += [("past_key_values.%d.key" % i, "present.%d.key" % i),
                  ("past_key_values.%d.value" % i, "present.%d.value" % i)]
    return pairs


def export(kind, cfg, out_dir, seed):
    import torch

    torch.manual_seed(seed)
    model, head_size, kv_heads = build(kind, cfg)
    pairs = names(kind, cfg["layers"])
    batch, seq, past_len = 1, 3, 5
    ids = torch.randint(0, cfg["vocab"], (batch, seq))
    mask = torch.ones(batch, past_len + seq, dtype=torch.int64)
    pos = torch.arange(past_len, past_len + seq).unsqueeze(0)
    if kind == "gpt2_stacked":
        past_shape = [2, batch, kv_heads, past_len, head_size]
        past_axis, batch_axis = 3, 1
    else:
        past_shape = [batch, kv_heads, past_len, head_size]
        past_axis, batch_axis = 2, 0
    past = [torch.randn(*past_shape) for _ in pairs]
    dynamic = {"input_ids": {0: "batch_size", 1: "sequence_length"},
               "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
               "position_ids": {0: "batch_size", 1: "sequence_length"},
               "logits": {0: "batch_size", 1: "sequence_length"}}
    for p, q in pairs:
        dynamic[p] = {batch_axis: "batch_size", past_axis: "past_sequence_length"}
        dynamic[q] = {batch_axis: "batch_size", past_axis: "total_sequence_length"}
    path = os.path.join(out_dir, "%s.onnx" % kind)
    input_names = ["input_ids", "attention_mask", "position_ids"] + [p for p, _ in pairs]
    output_names = ["logits"] + [q for _, q in pairs]
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask, pos, *past), path, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic, opset_version=17,
                          do_constant_folding=True)
    params = sum(p.numel() for p in model.parameters())
    manifest = {"model": os.path.abspath(path), "kind": kind, "vocab": cfg["vocab"],
                "positions": cfg["positions"], "parameters": params,
                "input_ids": "input_ids", "attention_mask": "attention_mask",
                "position_ids": "position_ids", "logits": "logits",
                "cache": [{"past": p, "present": q, "shape": past_shape, "past_axis": past_axis,
                           "batch_axis": batch_axis} for p, q in pairs]}
    with open(os.path.join(out_dir, "%s.json" % kind), "w") as f:
        json.dump(manifest, f, indent=1)
    return path, params


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for kind in args.kinds.split(","):
        if kind not in KINDS:
            sys.exit("make_decoder_models.py: unknown kind %s (one of %s)" % (kind, ", ".join(KINDS)))
        path, params = export(kind, SIZES[args.size], args.out_dir, args.seed)
        print("%s: %.2f M parameters" % (path, params / 1e6))


if __name__ == "__main__":
    main()
