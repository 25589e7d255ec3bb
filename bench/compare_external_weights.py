#!/usr/bin/python3
"""onnxlens against ONNX Runtime on models whose weights live in external data files (issue 25).

usage: compare_external_weights.py [--models embedding,decoder] [--rounds N] [--threads N]
                                   [--cli PATH] [--ort DIR] [--json-out FILE]

Makes the models first when they are missing (bench/make_external_weights_models.py, into
$ONNXLENS_BENCH_CACHE/external or ~/.cache/onnxlens-bench/external; never committed). Each round
runs a fresh `onnxlens-cli bench --json` and a fresh ONNX Runtime process (bench/ort_bench.mjs:
all graph optimizations) on the same inputs, alternating which goes first, and takes from each:
load time (file to ready session), first-run time, median latency, and the process's peak RSS
(VmHWM: for onnxlens from /usr/bin/time, for ORT from /proc/self/status at the end; it counts
resident pages of mapped files too). ORT's RSS is also shown net of Node's own (the addon loaded,
no session). Prints a Markdown table of medians over the rounds; ratios are onnxlens / ORT (below
1: onnxlens faster or smaller). Also prints onnxlens's weights_mapped_bytes and
weights_copied_bytes, and checks that both engines' outputs agree.
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
import make_external_weights_models as makers  # noqa: E402

# warm-up and counted runs per round
RUNS = {"embedding": (5, 50), "decoder": (1, 3)}


def run_json(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr.strip()))
    return json.loads(proc.stdout)


def bench_onnxlens(args, manifest, warmup, runs, dump=None):
    flags = []
    for entry in manifest["inputs"]:
        flags += ["--input", "%s=%s" % (entry["name"], entry["file"])]
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        doc = run_json(["/usr/bin/time", "-f", "%M", "-o", rss.name, args.cli, "bench", manifest["model"],
                        "--json", "--threads", str(args.threads), "--warmup", str(warmup), "--runs",
                        str(runs)] + flags)
        doc["peak_rss_kb"] = int(rss.read().strip().splitlines()[-1])
    if dump:
        proc = subprocess.run([args.cli, "run", manifest["model"], "--threads", str(args.threads), "--out", dump]
                              + flags, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise SystemExit("onnxlens-cli run failed: " + proc.stderr.strip())
    return doc


def bench_ort(args, manifest_file, warmup, runs, dump=None):
    cmd = ["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", args.ort, "--manifest", manifest_file,
           "--threads", str(args.threads), "--warmup", str(warmup), "--runs", str(runs)]
    if dump:
        cmd += ["--dump", dump]
    return run_json(cmd)


def outputs_agree(args, manifest, manifest_file):
    """Largest |onnxlens - ORT| / max|ORT| over the outputs (one extra run of each)."""
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as theirs:
        bench_onnxlens(args, manifest, 0, 1, dump=ours)
        bench_ort(args, manifest_file, 0, 1, dump=theirs)
        worst = 0.0
        mine = sorted(f for f in os.listdir(ours) if f.endswith(".npy"))
        for k, file in enumerate(sorted(f for f in os.listdir(theirs) if f.endswith(".npy"))):
            b = np.load(os.path.join(theirs, file))
            a = np.load(os.path.join(ours, mine[k])) if k < len(mine) else None
            if a is None or a.shape != b.shape:
                return float("inf")
            scale = max(float(np.max(np.abs(b))), 1e-30)
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))) / scale)
        return worst


def ratio(a, b):
    return a / b if b else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="embedding,decoder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cli", default=os.environ.get("ONNXLENS_CLI",
                                                        os.path.join(REPO, "build/release/app/onnxlens-cli")))
    parser.add_argument("--ort", default=os.path.join(makers.cache_dir(), "ort"))
    parser.add_argument("--json-out")
    parser.add_argument("--no-check", action="store_true", help="skip the output agreement check")
    args = parser.parse_args()

    node_rss = run_json(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", args.ort,
                         "--baseline"])["peak_rss_kb"]
    rows = []
    for name in args.models.split(","):
        folder = os.path.join(makers.cache_dir(), "external", name)
        manifest_file = os.path.join(folder, "manifest.json")
        if not os.path.exists(manifest_file):
            (makers.make_embedding if name == "embedding" else makers.make_decoder)(folder)
        with open(manifest_file) as f:
            manifest = json.load(f)
        warmup, runs = RUNS[name]
        samples = {"onnxlens": [], "ort": []}
        for r in range(args.rounds):
            order = ["onnxlens", "ort"] if r % 2 == 0 else ["ort", "onnxlens"]
            for engine in order:
                doc = (bench_onnxlens(args, manifest, warmup, runs) if engine == "onnxlens"
                       else bench_ort(args, manifest_file, warmup, runs))
                samples[engine].append(doc)
                print("%s round %d %s: load %.1f ms, first run %.1f ms, median %.2f ms, peak RSS %.1f MB"
                      % (name, r + 1, engine, doc["load_ms"], doc["first_run_ms"], doc["median_ms"],
                         doc["peak_rss_kb"] / 1024), file=sys.stderr)
        row = {"model": name, "threads": args.threads, "rounds": args.rounds}
        for engine, docs in samples.items():
            for key in ("load_ms", "first_run_ms", "median_ms", "peak_rss_kb"):
                row["%s_%s" % (engine, key)] = statistics.median(d[key] for d in docs)
        row["ort_net_peak_rss_kb"] = row["ort_peak_rss_kb"] - node_rss
        row["weights_mapped_bytes"] = samples["onnxlens"][-1].get("weights_mapped_bytes")
        row["weights_copied_bytes"] = samples["onnxlens"][-1].get("weights_copied_bytes")
        row["max_rel_diff"] = float("nan") if args.no_check else outputs_agree(args, manifest, manifest_file)
        rows.append(row)

    print("| model | onnxlens load ms | ORT load ms | ratio | onnxlens first run ms | ORT first run ms "
          "| onnxlens median ms | ORT median ms | onnxlens peak RSS MB | ORT peak RSS MB (net of Node) "
          "| RSS ratio (whole / net) | mapped MB | copied MB | max rel diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f (%.1f) | %.2f / %.2f | %.1f | %.1f | %.2g |"
              % (r["model"], r["onnxlens_load_ms"], r["ort_load_ms"], ratio(r["onnxlens_load_ms"], r["ort_load_ms"]),
                 r["onnxlens_first_run_ms"], r["ort_first_run_ms"], r["onnxlens_median_ms"], r["ort_median_ms"],
                 r["onnxlens_peak_rss_kb"] / 1024, r["ort_peak_rss_kb"] / 1024, r["ort_net_peak_rss_kb"] / 1024,
                 ratio(r["onnxlens_peak_rss_kb"], r["ort_peak_rss_kb"]),
                 ratio(r["onnxlens_peak_rss_kb"], r["ort_net_peak_rss_kb"]),
                 (r["weights_mapped_bytes"] or 0) / 2**20, (r["weights_copied_bytes"] or 0) / 2**20,
                 r["max_rel_diff"]))
    print("\n%d rounds, %d threads; medians over the rounds. Node's own peak RSS (addon loaded, no session): "
          "%.1f MB." % (args.rounds, args.threads, node_rss / 1024))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"node_baseline_rss_kb": node_rss, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
