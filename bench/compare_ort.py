#!/usr/bin/python3
"""onnxlens against ONNX Runtime, model for model (issue 7). Run through bench/compare_ort.sh.

For each model and thread count, runs `onnxlens-cli bench --json` and ONNX Runtime
(bench/ort_bench.mjs: all graph optimizations, intra-op threads set, inter-op 1) on the same
inputs, alternating which goes first, several rounds; each round is a fresh process of each, so
load time and peak RSS are measured every round too. Prints a Markdown table of medians and
ratios (onnxlens / ORT: below 1 means onnxlens is faster or smaller) and checks that both engines
compute the same outputs.
"""
import argparse
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
import make_bench_models  # noqa: E402

# Timed runs per round (full mode); --quick uses a third. Chosen so one round takes ~1-2 s.
RUNS = {"resnet50": 20, "mobilenet_v2": 60, "bert_base": 12, "lstm": 600, "vad": 600,
        "bert_base_int8": 20, "resnet50_int8": 10, "resnet50_int8_qop": 10, "mobilenet_v2_fp16": 60,
        "resnet50_fp16": 20,
        "detector": 20, "recognizer": 60, "small_cnn": 1000, "vad_stream": 3000, "minilm_seq16": 300,
        "bert_base_ort_fused": 12, "mobilenet_v2_qop": 60,
        "overhead_add": 5000, "overhead_chain": 3000, "overhead_if": 5000, "overhead_loop": 3000}


def run_json(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr.strip()))
    return json.loads(proc.stdout)


def input_flags(manifest):
    flags = []
    for entry in manifest["inputs"]:
        flags += ["--input", "%s=%s" % (entry["name"], entry["file"])]
    return flags


def bench_onnxlens(args, manifest, threads, warmup, runs):
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        doc = run_json(["/usr/bin/time", "-f", "%M", "-o", rss.name, args.cli, "bench", manifest["model"],
                        "--json", "--threads", str(threads), "--warmup", str(warmup), "--runs", str(runs)] +
                       input_flags(manifest))
        doc["peak_rss_kb"] = int(rss.read().strip().splitlines()[-1])
    return doc


def bench_ort(args, manifest_file, threads, warmup, runs, dump=None):
    cmd = ["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", args.ort, "--manifest", manifest_file,
           "--threads", str(threads), "--warmup", str(warmup), "--runs", str(runs)]
    if dump:
        cmd += ["--dump", dump]
    return run_json(cmd)


def max_difference(args, name, manifest, manifest_file):
    """Largest |onnxlens - ORT| over every output, relative to the output's largest magnitude."""
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "onnxlens"), os.path.join(tmp, "ort")
        subprocess.run([args.cli, "run", manifest["model"], "--threads", "1", "--out", ours] + input_flags(manifest),
                       check=True, stdout=subprocess.DEVNULL)
        bench_ort(args, manifest_file, 1, 0, 1, dump=theirs)
        worst = 0.0
        for file in sorted(os.listdir(theirs)):
            a, b = np.load(os.path.join(ours, file)), np.load(os.path.join(theirs, file))
            if a.shape != b.shape:
                raise SystemExit("%s: %s has shape %s on onnxlens, %s on ORT" % (name, file, a.shape, b.shape))
            scale = max(1e-6, float(np.max(np.abs(b)))) if b.size else 1.0
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))) / scale if a.size else 0.0)
        return worst


def ratio(a, b):
    return a / b if b > 0 else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 rounds, a third of the runs (a few minutes)")
    parser.add_argument("--rounds", type=int, help="alternating rounds per model and thread count (default 5)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--models", default=",".join(make_bench_models.MODELS))
    parser.add_argument("--cache", required=True, help="folder for generated models and inputs")
    parser.add_argument("--ort", required=True, help="folder holding node_modules/onnxruntime-node")
    parser.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "onnxlens-cli"))
    parser.add_argument("--json-out", help="also write every measurement to this JSON file")
    parser.add_argument("--busy", type=int, default=0, metavar="N",
                        help="keep N other processes busy-looping while measuring (a desktop whose "
                             "cores other programs use)")
    args = parser.parse_args()
    busy = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(args.busy)]
    try:
        measure(args)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def measure(args):
    rounds = args.rounds or (2 if args.quick else 5)
    thread_counts = [int(t) for t in args.threads.split(",")]
    models = args.models.split(",")
    make_bench_models.CLI = args.cli  # the int8 variants are made by `onnxlens-cli quantize`

    node_rss = run_json(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", args.ort,
                         "--baseline"])["peak_rss_kb"]
    results = []
    for name in models:
        manifest_file = make_bench_models.prepare(args.cache, name)
        with open(manifest_file) as f:
            manifest = json.load(f)
        runs = max(5, RUNS[name] // 3) if args.quick else RUNS[name]
        warmup = max(2, runs // 10)
        diff = max_difference(args, name, manifest, manifest_file)
        for threads in thread_counts:
            ours, theirs = [], []
            for r in range(rounds):
                order = [("onnxlens", ours), ("ort", theirs)]
                if r % 2:
                    order.reverse()
                for engine, sink in order:
                    if engine == "onnxlens":
                        sink.append(bench_onnxlens(args, manifest, threads, warmup, runs))
                    else:
                        sink.append(bench_ort(args, manifest_file, threads, warmup, runs))
            med = lambda docs, key: statistics.median(d[key] for d in docs)  # noqa: E731
            row = {"model": name, "threads": threads, "rounds": rounds, "runs": runs, "max_rel_diff": diff}
            for key in ("median_ms", "load_ms", "peak_rss_kb"):
                row["onnxlens_" + key] = med(ours, key)
                row["ort_" + key] = med(theirs, key)
            # Counted runs onnxlens ran on fewer threads than asked (other programs kept the
            # cores busy: SessionOptions::adaptThreadsToLoad), over all rounds.
            row["onnxlens_reduced_runs"] = sum(d.get("threads_reduced_runs", 0) for d in ours)
            row["onnxlens_counted_runs"] = sum(d["runs"] for d in ours)
            # ORT's RSS without Node's own (the addon loaded, no session): the runtime's share.
            row["ort_net_peak_rss_kb"] = row["ort_peak_rss_kb"] - node_rss
            results.append(row)
            print("%s, %d thread(s): onnxlens %.3f ms, ORT %.3f ms" %
                  (name, threads, row["onnxlens_median_ms"], row["ort_median_ms"]), file=sys.stderr, flush=True)

    print("| model | threads | onnxlens ms | ORT ms | ratio | onnxlens load ms | ORT load ms | ratio "
          "| onnxlens peak RSS MB | ORT peak RSS MB (net) | ratio | max rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print("| %s | %d | %.3f | %.3f | **%.2f** | %.1f | %.1f | %.2f | %.1f | %.1f (%.1f) | %.2f | %.1e |" % (
            r["model"], r["threads"], r["onnxlens_median_ms"], r["ort_median_ms"],
            ratio(r["onnxlens_median_ms"], r["ort_median_ms"]), r["onnxlens_load_ms"], r["ort_load_ms"],
            ratio(r["onnxlens_load_ms"], r["ort_load_ms"]), r["onnxlens_peak_rss_kb"] / 1024,
            r["ort_peak_rss_kb"] / 1024, r["ort_net_peak_rss_kb"] / 1024,
            ratio(r["onnxlens_peak_rss_kb"], r["ort_net_peak_rss_kb"]), r["max_rel_diff"]))
    print("\nMedians over %d alternating rounds (fresh processes). Ratios are onnxlens / ORT; the RSS ratio "
          "uses ORT's net figure (Node's own %.1f MB, measured with the addon loaded and no session, "
          "subtracted). max rel. diff: largest |onnxlens - ORT| over the outputs divided by the output's "
          "largest magnitude." % (rounds, node_rss / 1024))
    reduced = ["%s at %d threads %d of %d" % (r["model"], r["threads"], r["onnxlens_reduced_runs"],
                                              r["onnxlens_counted_runs"])
               for r in results if r["onnxlens_reduced_runs"]]
    if reduced:
        print("onnxlens runs on fewer threads (other programs kept the cores busy): " + "; ".join(reduced) + ".")
    if args.busy:
        print("Measured with %d busy-looping process(es) beside the engines (--busy)." % args.busy)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"node_baseline_rss_kb": node_rss, "busy": args.busy, "results": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
