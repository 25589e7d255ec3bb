#!/usr/bin/python3
"""int8 dynamic quantization of one transformer, onnxlens against ONNX Runtime's own quantizer
(issue 29, part 5): `onnxlens-cli quantize MODEL` (its defaults: MatMul, Gemm and the Gather
embedding tables, int8) and onnxruntime.quantization.quantize_dynamic (its defaults) on the same
float file; each int8 file, and the float one, run in ONNX Runtime on the same token ids, so the
runtime judging the error is the same for both. Prints file sizes (and their fraction of the float
file) and, per output, the largest |int8 - float| and the SQNR in dB over the input sets.

usage: quantize_dynamic_vs_ort.py --cli CLI --model FLOAT.onnx --out DIR [--seeds 1,1001]
                                  [--sequence 128] [--vocab 30522] [--json FILE]
Needs python3 with numpy, onnx and onnxruntime (its quantization module).
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np


def feeds_for(session, seed, sequence, vocab):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        if "mask" in i.name:
            feeds[i.name] = np.ones((1, sequence), dtype=np.int64)
        elif "type" in i.name or "segment" in i.name:
            feeds[i.name] = np.zeros((1, sequence), dtype=np.int64)
        else:
            feeds[i.name] = rng.integers(0, vocab, (1, sequence)).astype(np.int64)
    return feeds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", default="1,1001")
    parser.add_argument("--sequence", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--json")
    args = parser.parse_args()
    import onnxruntime as ort
    from onnxruntime.quantization import quantize_dynamic

    os.makedirs(args.out, exist_ok=True)
    files = {"float": args.model,
             "onnxlens int8": os.path.join(args.out, "onnxlens_int8.onnx"),
             "ORT quantize_dynamic": os.path.join(args.out, "ort_int8.onnx")}
    subprocess.run([args.cli, "quantize", args.model, files["onnxlens int8"]], check=True,
                   stdout=subprocess.DEVNULL)
    quantize_dynamic(args.model, files["ORT quantize_dynamic"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    sessions = {k: ort.InferenceSession(v, options, providers=["CPUExecutionProvider"]) for k, v in files.items()}
    names = [o.name for o in sessions["float"].get_outputs()]
    seeds = [int(s) for s in args.seeds.split(",")]
    errors = {k: {n: {"max_abs": 0.0, "signal": 0.0, "noise": 0.0} for n in names} for k in files if k != "float"}
    for seed in seeds:
        feeds = feeds_for(sessions["float"], seed, args.sequence, args.vocab)
        reference = dict(zip(names, sessions["float"].run(names, feeds)))
        for key in errors:
            got = dict(zip(names, sessions[key].run(names, feeds)))
            for n in names:
                diff = got[n].astype(np.float64) - reference[n].astype(np.float64)
                e = errors[key][n]
                e["max_abs"] = max(e["max_abs"], float(np.abs(diff).max()))
                e["signal"] += float((reference[n].astype(np.float64) ** 2).sum())
                e["noise"] += float((diff ** 2).sum())
    float_size = os.path.getsize(files["float"])
    rows = []
    print("| file | MB | of float | " + " | ".join("%s max abs err (SQNR dB)" % n for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for key, path in files.items():
        size = os.path.getsize(path)
        row = {"file": key, "bytes": size, "fraction": size / float_size}
        cells = []
        for n in names:
            if key == "float":
                cells.append("")
                continue
            e = errors[key][n]
            sqnr = 10 * math.log10(e["signal"] / e["noise"]) if e["noise"] > 0 else float("inf")
            row[n] = {"max_abs": e["max_abs"], "sqnr_db": sqnr}
            cells.append("%.4f (%.1f)" % (e["max_abs"], sqnr))
        rows.append(row)
        print("| %s | %.1f | %.3f | %s |" % (key, size / 1e6, size / float_size, " | ".join(cells)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
