#!/usr/bin/python3
"""Exports a BERT-base-shaped encoder (12 layers, hidden 768, 12 heads, FF 3072, vocab 30522:
about 110M parameters, a ~440 MB .onnx) with random seeded weights, for the `info` load
benchmark. Not committed: generate it where you measure.

usage: make_bert_base.py OUT_DIR      (writes OUT_DIR/model.onnx)
"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def load_sample_models():
    # The BERT-style encoder of the sample models, at BERT-base size.
    path = os.path.join(HERE, "..", "resources", "samples", "make_samples.py")
    spec = importlib.util.spec_from_file_location("make_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    samples = load_sample_models()
    torch.manual_seed(0)
    model = samples.BertEncoder(vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072,
                                max_positions=512).eval()
    ids = torch.randint(0, 30522, (1, 128))
    mask = torch.ones(1, 128, dtype=torch.long)
    path = os.path.join(out_dir, "model.onnx")
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}, "pooled_output": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state", "pooled_output"], dynamic_axes=axes,
                          opset_version=14)
    parameters = sum(p.numel() for p in model.parameters())
    print("%s: %.1f MB, %d parameters" % (path, os.path.getsize(path) / 1e6, parameters))
    return 0


if __name__ == "__main__":
    sys.exit(main())
