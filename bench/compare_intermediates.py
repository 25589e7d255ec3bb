#!/usr/bin/python3
"""Where do onnxlens and ONNX Runtime part on a model? Exposes chosen intermediate values as graph
outputs, runs both engines on the same inputs (ONNX Runtime with graph optimizations disabled, so
that every value exists; onnxlens with --no-optimize unless --optimize) and prints, in graph order,
each value's largest difference (issue 17's int8 BERT investigation).

usage: compare_intermediates.py ORT_DIR ONNXLENS_CLI MANIFEST [--ops DynamicQuantizeLinear,Softmax,...]
                                [--optimize] [--limit N]
    MANIFEST   written by make_bench_models.py ({"model": path, "inputs": [{"name", "file"}]})
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ort")
    parser.add_argument("cli")
    parser.add_argument("manifest")
    parser.add_argument("--ops", default="", help="only the outputs of these op types (default: all)")
    parser.add_argument("--optimize", action="store_true")
    parser.add_argument("--limit", type=int, default=400)
    args = parser.parse_args()
    with open(args.manifest) as f:
        manifest = json.load(f)
    model = onnx.load(manifest["model"])
    ops = set(args.ops.split(",")) if args.ops else None
    existing = {o.name for o in model.graph.output}
    chosen = []
    for node in model.graph.node:
        if ops and node.op_type not in ops:
            continue
        for out in node.output:
            if out and out not in existing and len(chosen) < args.limit:
                chosen.append((out, node.op_type))
    for name, _ in chosen:
        model.graph.output.add().name = name
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        m2 = dict(manifest, model=path)
        mf = os.path.join(tmp, "manifest.json")
        with open(mf, "w") as f:
            json.dump(m2, f)
        subprocess.run(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", os.path.abspath(args.ort),
                        "--manifest", mf, "--warmup", "0", "--runs", "1", "--opt-level", "disabled",
                        "--dump", os.path.join(tmp, "ort")], check=True, stdout=subprocess.DEVNULL)
        flags = sum([["--input", "%s=%s" % (e["name"], e["file"])] for e in manifest["inputs"]], [])
        subprocess.run([args.cli, "run", path, "--threads", "1", "--out", os.path.join(tmp, "ours")] + flags +
                       ([] if args.optimize else ["--no-optimize"]), check=True, stdout=subprocess.DEVNULL)
        names = [o.name for o in model.graph.output]
        op_of = dict(chosen)
        for k, name in enumerate(names):
            a = os.path.join(tmp, "ours", "output_%d.npy" % k)
            b = os.path.join(tmp, "ort", "output_%d.npy" % k)
            if not (os.path.exists(a) and os.path.exists(b)):
                continue
            x, y = np.load(a).astype(np.float64), np.load(b).astype(np.float64)
            if x.shape != y.shape:
                print("%-60s shapes %s %s" % (name, x.shape, y.shape))
                continue
            d = np.abs(x - y)
            scale = max(1e-12, float(np.max(np.abs(y)))) if y.size else 1.0
            print("%-22s %-60s max|d| %.3g rel %.3g  differing %d/%d" % (
                op_of.get(name, "output"), name[-60:], float(d.max()) if d.size else 0.0,
                float(d.max()) / scale if d.size else 0.0, int(np.count_nonzero(d)), d.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
