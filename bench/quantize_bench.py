#!/usr/bin/python3
"""int8 dynamic quantization on the benchmark models (issue 16): `onnxlens-cli quantize` on a
ResNet-50 export and a BERT-base-shaped export at sequence 128, then for float and int8:
file size, output agreement (cosine, SQNR, top-1) and latency on the engine and in ONNX Runtime
(npm onnxruntime-node) at each thread count. Prints a Markdown table and writes JSON.

usage: quantize_bench.py [--cache DIR] [--ort DIR] [--cli PATH] [--models resnet50,bert_base]
                         [--threads 1,2] [--runs N] [--warmup N] [--json-out FILE]

The models are made as compare_ort.sh makes them (make_bench_models.py, into the cache). ONNX
Runtime also checks that the int8 models run there and agree with the engine's int8 outputs.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_bench_models  # noqa: E402

# What each model quantizes: ResNet-50 is convolutions (per output channel, as for any CNN);
# BERT is MatMul/Gemm per tensor, ONNX Runtime's quantize_dynamic defaults.
QUANTIZE_ARGS = {
    "resnet50": ["--op-types", "Conv,Gemm,MatMul", "--per-channel"],
    "bert_base": [],
}
DIMS = {"resnet50": [], "bert_base": ["--dim", "batch=1", "--dim", "sequence=128"]}


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def agreement(ref, act):
    ref = ref.astype(np.float64).ravel()
    act = act.astype(np.float64).ravel()
    err = act - ref
    cos = float(np.dot(ref, act) / math.sqrt(np.dot(ref, ref) * np.dot(act, act)))
    noise = float(np.dot(err, err))
    sqnr = math.inf if noise == 0 else 10 * math.log10(float(np.dot(ref, ref)) / noise)
    return {"cosine": cos, "sqnr_db": sqnr, "max_abs_error": float(np.abs(err).max())}


def engine_latency(cli, model, manifest, threads, runs, warmup):
    cmd = [cli, "bench", model, "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup), "--json"]
    for entry in manifest["inputs"]:
        cmd += ["--input", f"{entry['name']}={entry['file']}"]
    return json.loads(run(cmd))["median_ms"]


def engine_outputs(cli, model, manifest, out_dir):
    cmd = [cli, "run", model, "--out", out_dir, "--threads", "1"]
    for entry in manifest["inputs"]:
        cmd += ["--input", f"{entry['name']}={entry['file']}"]
    run(cmd)
    return sorted(f for f in os.listdir(out_dir) if f.endswith(".npy"))


def ort_run(ort, manifest_file, threads, runs, warmup, dump=None):
    cmd = ["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", ort, "--manifest", manifest_file,
           "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup)]
    if dump:
        cmd += ["--dump", dump]
    return json.loads(run(cmd))


def bench_model(args, name):
    manifest_file = make_bench_models.prepare(args.cache, name)
    with open(manifest_file) as f:
        manifest = json.load(f)
    float_model = manifest["model"]
    folder = os.path.dirname(float_model)
    int8_model = os.path.join(folder, "model.int8.onnx")
    report_dir = os.path.join(folder, "quantize_report")
    print(f"quantizing {float_model} ...", file=sys.stderr, flush=True)
    summary = json.loads(run([args.cli, "quantize", float_model, int8_model, *QUANTIZE_ARGS[name], "--json",
                              "--report", report_dir, "--no-bench", "--threads", "2", *DIMS[name]]))
    with open(os.path.join(report_dir, "report.json")) as f:
        report = json.load(f)
    int8_manifest_file = os.path.join(os.path.dirname(manifest_file), "manifest.int8.json")
    with open(int8_manifest_file, "w") as f:
        json.dump({**manifest, "model": int8_model}, f, indent=1)

    result = {"model": name, "float_bytes": summary["bytes_before"], "int8_bytes": summary["bytes_after"],
              "size_ratio": summary["size_ratio"], "quantized": summary["quantized_per_op_type"],
              "report_outputs": report["outputs"], "report_inputs": report["input_sets"],
              "weakest_nodes": report["nodes"][:3], "latency": []}

    # Agreement on the benchmark input: engine int8 vs engine float, ORT int8 vs ORT float, and
    # the engine's int8 outputs vs ONNX Runtime's (the same int8 model in both).
    dumps = {}
    for kind, model, mf in (("float", float_model, manifest_file), ("int8", int8_model, int8_manifest_file)):
        engine_dir = os.path.join(folder, f"engine_out_{kind}")
        files = engine_outputs(args.cli, model, manifest, engine_dir)
        ort_dir = os.path.join(folder, f"ort_out_{kind}")
        ort_run(args.ort, mf, 1, 1, 0, dump=ort_dir)
        dumps[kind] = {"engine": [np.load(os.path.join(engine_dir, f)) for f in files],
                       "ort": [np.load(os.path.join(ort_dir, f)) for f in files]}
    result["agreement"] = []
    for k in range(len(dumps["float"]["engine"])):
        entry = {"output": k,
                 "engine_int8_vs_float": agreement(dumps["float"]["engine"][k], dumps["int8"]["engine"][k]),
                 "ort_int8_vs_float": agreement(dumps["float"]["ort"][k], dumps["int8"]["ort"][k]),
                 "engine_int8_vs_ort_int8": agreement(dumps["int8"]["ort"][k], dumps["int8"]["engine"][k])}
        ref = dumps["float"]["engine"][k]
        if ref.ndim == 2 and ref.shape[1] >= 10:
            entry["top1_engine"] = bool(np.argmax(ref[0]) == np.argmax(dumps["int8"]["engine"][k][0]))
            entry["top1_ort"] = bool(np.argmax(dumps["float"]["ort"][k][0]) == np.argmax(dumps["int8"]["ort"][k][0]))
        result["agreement"].append(entry)

    for threads in args.threads:
        row = {"threads": threads}
        for kind, model, mf in (("float", float_model, manifest_file), ("int8", int8_model, int8_manifest_file)):
            print(f"{name} {kind} {threads} threads ...", file=sys.stderr, flush=True)
            row[f"engine_{kind}_ms"] = engine_latency(args.cli, model, manifest, threads, args.runs, args.warmup)
            row[f"ort_{kind}_ms"] = ort_run(args.ort, mf, threads, args.runs, args.warmup)["median_ms"]
        result["latency"].append(row)
    return result


def markdown(results):
    lines = ["| model | float | int8 | size ratio | output | cosine | SQNR | top-1 |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for o in r["report_outputs"]:
            top1 = f"{100 * o['top1_agreement']:.0f}% of {o['rows']}" if o.get("logits") else "-"
            sqnr = o["sqnr_db"] if o["sqnr_db"] == "inf" else f"{o['sqnr_db']:.1f} dB"
            lines.append(f"| {r['model']} | {r['float_bytes'] / 1e6:.1f} MB | {r['int8_bytes'] / 1e6:.1f} MB | "
                         f"{r['size_ratio']:.2f}x | {o['name']} | {o['cosine']:.5f} | {sqnr} | {top1} |")
    lines += ["", "| model | threads | engine float | engine int8 | engine speed-up | ORT float | ORT int8 | "
              "ORT speed-up | engine int8 / ORT int8 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for row in r["latency"]:
            lines.append(f"| {r['model']} | {row['threads']} | {row['engine_float_ms']:.1f} ms | "
                         f"{row['engine_int8_ms']:.1f} ms | {row['engine_float_ms'] / row['engine_int8_ms']:.2f}x | "
                         f"{row['ort_float_ms']:.1f} ms | {row['ort_int8_ms']:.1f} ms | "
                         f"{row['ort_float_ms'] / row['ort_int8_ms']:.2f}x | "
                         f"{row['engine_int8_ms'] / row['ort_int8_ms']:.2f}x |")
    lines += ["", "| model | output | engine int8 vs float (cosine, SQNR) | ORT int8 vs float | engine int8 vs ORT int8 |",
              "|---|---|---|---|---|"]
    for r in results:
        for a in r["agreement"]:
            cells = []
            for key in ("engine_int8_vs_float", "ort_int8_vs_float", "engine_int8_vs_ort_int8"):
                v = a[key]
                cells.append(f"{v['cosine']:.5f}, {v['sqnr_db']:.1f} dB")
            lines.append(f"| {r['model']} | {a['output']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    cache_default = os.environ.get("ONNXLENS_BENCH_CACHE", os.path.expanduser("~/.cache/onnxlens-bench"))
    parser.add_argument("--cache", default=cache_default)
    parser.add_argument("--ort", default=os.path.join(cache_default, "ort"))
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "build", "release", "app", "onnxlens-cli"))
    parser.add_argument("--models", default="resnet50,bert_base")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    results = [bench_model(args, name) for name in args.models.split(",")]
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(results, f, indent=1)
    print(markdown(results))


if __name__ == "__main__":
    main()
