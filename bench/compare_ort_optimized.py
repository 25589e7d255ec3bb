#!/usr/bin/python3
"""The graphs ONNX Runtime saves at its `extended` level, run in onnxlens (issue: ORT-saved
optimized models; com.microsoft FusedConv, FusedGemm, FusedMatMul).

For each bench model with a manifest (make_bench_models.py; default resnet50, mobilenet_v2,
bert_base), saves the graph ORT runs at `extended` (bench/ort_bench.mjs --save-optimized), lists
the com.microsoft operators in it, runs it once in onnxlens (`onnxlens-cli run --out`) and in ORT
on the same inputs and compares every output: max abs and max relative error (|a - b| over the
output's largest magnitude, as compare_ort.py); exits 1 when one is over --tolerance.
With --speed, times at each --threads count, alternating fresh processes over --rounds rounds
(compare_ort.py's helpers): onnxlens on the saved graph, onnxlens on the original model, and ORT
on the saved graph; prints medians and ratios.

usage: bench/compare_ort_optimized.py --ort /work/ort/node_modules/.. [--models a,b] [--speed]
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare_ort  # noqa: E402

DEFAULT_MODELS = "resnet50,mobilenet_v2,bert_base"
DEFAULT_MANIFESTS = os.path.expanduser("~/.cache/onnxlens-bench/inputs")


def save_extended(args, manifest_file, out_model):
    subprocess.run(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", args.ort, "--manifest", manifest_file,
                    "--warmup", "0", "--runs", "1", "--opt-level", "extended", "--save-optimized", out_model],
                   check=True, stdout=subprocess.DEVNULL)


def microsoft_ops(model_file):
    """com.microsoft operator counts, read with onnx without the weights."""
    import onnx
    model = onnx.load(model_file, load_external_data=False)
    return dict(collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft"))


def agreement(args, name, manifest, manifest_file):
    """Max abs and max relative difference over every output (onnxlens vs ORT, same graph)."""
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "onnxlens"), os.path.join(tmp, "ort")
        subprocess.run([args.cli, "run", manifest["model"], "--threads", "1", "--out", ours] +
                       compare_ort.input_flags(manifest), check=True, stdout=subprocess.DEVNULL)
        compare_ort.bench_ort(args, manifest_file, 1, 0, 1, dump=theirs)
        worst_abs = worst_rel = 0.0
        for file in sorted(os.listdir(theirs)):
            a, b = np.load(os.path.join(ours, file)), np.load(os.path.join(theirs, file))
            if a.shape != b.shape:
                raise SystemExit("%s: %s has shape %s on onnxlens, %s on ORT" % (name, file, a.shape, b.shape))
            if not a.size:
                continue
            diff = float(np.max(np.abs(a.astype(np.float64) - b)))
            worst_abs = max(worst_abs, diff)
            worst_rel = max(worst_rel, diff / max(1e-6, float(np.max(np.abs(b)))))
        return worst_abs, worst_rel


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--manifests", default=DEFAULT_MANIFESTS,
                        help="folder of <model>/manifest.json (make_bench_models.py's inputs)")
    parser.add_argument("--ort", required=True, help="folder holding node_modules/onnxruntime-node")
    parser.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "onnxlens-cli"))
    parser.add_argument("--out", help="folder for the saved graphs (default: a temporary one)")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest relative error allowed")
    parser.add_argument("--speed", action="store_true", help="also time both engines")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--runs", type=int, help="timed runs per round (default: compare_ort.py's per model)")
    parser.add_argument("--json-out", help="also write the results to this JSON file")
    args = parser.parse_args()

    work = tempfile.TemporaryDirectory()
    out_dir = args.out or work.name
    os.makedirs(out_dir, exist_ok=True)
    rows, failed = [], False
    for name in args.models.split(","):
        original_file = os.path.join(args.manifests, name, "manifest.json")
        with open(original_file) as f:
            original = json.load(f)
        saved = os.path.join(out_dir, "%s_extended.onnx" % name)
        save_extended(args, original_file, saved)
        manifest = dict(original, model=saved)
        manifest_file = os.path.join(out_dir, "%s_extended.manifest.json" % name)
        with open(manifest_file, "w") as f:
            json.dump(manifest, f, indent=1)
        ops = microsoft_ops(saved)
        max_abs, max_rel = agreement(args, name, manifest, manifest_file)
        ok = max_rel <= args.tolerance
        failed = failed or not ok
        row = {"model": name, "com_microsoft_ops": ops, "max_abs_diff": max_abs, "max_rel_diff": max_rel,
               "agrees": ok}
        print("%s: %s; max abs %.2e, max rel %.2e%s" % (
            name, ", ".join("%s x%d" % kv for kv in sorted(ops.items())) or "no com.microsoft node",
            max_abs, max_rel, "" if ok else "  OVER %.0e" % args.tolerance), file=sys.stderr, flush=True)
        if args.speed:
            runs = args.runs or compare_ort.RUNS.get(name, 20)
            warmup = max(2, runs // 10)
            row["timings"] = []
            for threads in [int(t) for t in args.threads.split(",")]:
                samples = {"saved": [], "original": [], "ort": []}
                for r in range(args.rounds):
                    order = ["saved", "original", "ort"]
                    order = order[r % 3:] + order[:r % 3]  # each goes first in turn
                    for which in order:
                        if which == "ort":
                            doc = compare_ort.bench_ort(args, manifest_file, threads, warmup, runs)
                        else:
                            doc = compare_ort.bench_onnxlens(
                                args, manifest if which == "saved" else original, threads, warmup, runs)
                        samples[which].append(doc["median_ms"])
                med = {k: statistics.median(v) for k, v in samples.items()}
                row["timings"].append({"threads": threads, "rounds": args.rounds, "runs": runs,
                                       "onnxlens_saved_ms": med["saved"], "onnxlens_original_ms": med["original"],
                                       "ort_saved_ms": med["ort"]})
                print("  %d thread(s): onnxlens on the saved graph %.2f ms, on the original %.2f ms, ORT %.2f ms" %
                      (threads, med["saved"], med["original"], med["ort"]), file=sys.stderr, flush=True)
        rows.append(row)

    print("| model | com.microsoft nodes | max abs diff | max rel diff |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.2e | %.2e |" % (r["model"], ", ".join("%s x%d" % kv for kv in
                                                                   sorted(r["com_microsoft_ops"].items())),
                                             r["max_abs_diff"], r["max_rel_diff"]))
    if args.speed:
        print("\n| model | threads | onnxlens saved ms | onnxlens original ms | ORT saved ms | saved / ORT "
              "| saved / original |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            for t in r["timings"]:
                print("| %s | %d | %.2f | %.2f | %.2f | **%.2f** | %.2f |" % (
                    r["model"], t["threads"], t["onnxlens_saved_ms"], t["onnxlens_original_ms"], t["ort_saved_ms"],
                    compare_ort.ratio(t["onnxlens_saved_ms"], t["ort_saved_ms"]),
                    compare_ort.ratio(t["onnxlens_saved_ms"], t["onnxlens_original_ms"])))
        print("\nMedians over %d rounds of fresh processes, the order rotating each round. ORT runs the saved "
              "graph at its default level (all)." % args.rounds)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
