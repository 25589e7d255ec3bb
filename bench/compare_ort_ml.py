#!/usr/bin/python3
"""onnxlens against ONNX Runtime on classical ML models (issue 23): a 300-tree random forest and a
gradient-boosting classifier, converted by resources/exporter/onnxlens_sklearn_export.py, at
batch 1 and batch 1,000.

    /usr/bin/python3 bench/compare_ort_ml.py --ort ~/.cache/onnxlens-bench/ort [--threads 1,2] [--rounds 3]

Like compare_ort.py: `onnxlens-cli bench --json` and bench/ort_bench.mjs (all graph optimizations,
intra-op threads set) on the same .npy inputs, alternating which goes first, fresh processes
each round; prints a Markdown table of medians and the ratio onnxlens / ORT (below 1: onnxlens
is faster), and checks that both compute the same probabilities. Three classes, so that both
engines read the ensembles the same way (ONNX Runtime has its own reading of two-class ones).
"""
import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "resources", "exporter"))
sys.path.insert(0, HERE)
import onnxlens_sklearn_export  # noqa: E402
from compare_ort import bench_onnxlens, bench_ort  # noqa: E402

FEATURES = 20


def make_models(cache):
    import onnx
    from sklearn.datasets import make_classification
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    X, y = make_classification(4000, FEATURES, n_informative=12, n_classes=3, random_state=0)
    specs = {
        "random_forest_300": lambda: RandomForestClassifier(300, max_depth=12, random_state=0, n_jobs=1),
        "gradient_boosting_100x3": lambda: GradientBoostingClassifier(n_estimators=100, max_depth=4, random_state=0),
    }
    manifests = {}
    for name, make in specs.items():
        folder = os.path.join(cache, "ml", name)
        os.makedirs(folder, exist_ok=True)
        model_path = os.path.join(folder, "model.onnx")
        if not os.path.exists(model_path):
            print(f"fitting {name}", file=sys.stderr, flush=True)
            est = make().fit(X, y)
            with open(os.path.join(folder, "model.pkl"), "wb") as f:
                pickle.dump(est, f)
            proto, _ = onnxlens_sklearn_export.convert(est, FEATURES)
            onnx.save(proto, model_path)
        rng = np.random.default_rng(1)
        for batch in (1, 1000):
            data = rng.standard_normal((batch, FEATURES)).astype(np.float32)
            npy = os.path.join(folder, f"input_{batch}.npy")
            np.save(npy, data)
            manifest = {"model": model_path, "inputs": [{"name": "input", "file": npy}]}
            manifest_file = os.path.join(folder, f"manifest_{batch}.json")
            with open(manifest_file, "w") as f:
                json.dump(manifest, f)
            manifests[(name, batch)] = (manifest, manifest_file)
    return manifests


def max_difference(args, manifest, manifest_file):
    """Largest |onnxlens - ORT| over the probabilities, and the number of differing labels."""
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "onnxlens"), os.path.join(tmp, "ort")
        subprocess.run([args.cli, "run", manifest["model"], "--threads", "1", "--out", ours,
                        "--input", f"input={manifest['inputs'][0]['file']}"], check=True, stdout=subprocess.DEVNULL)
        bench_ort(args, manifest_file, 1, 0, 1, dump=theirs)
        labels = int(np.sum(np.load(os.path.join(ours, "output_0.npy")) != np.load(os.path.join(theirs, "output_0.npy"))))
        proba = float(np.max(np.abs(np.load(os.path.join(ours, "output_1.npy")) - np.load(os.path.join(theirs, "output_1.npy")))))
        return labels, proba


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/onnxlens-bench"))
    parser.add_argument("--ort", required=True, help="folder holding node_modules/onnxruntime-node")
    parser.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "onnxlens-cli"))
    args = parser.parse_args()
    manifests = make_models(args.cache)
    rows = []
    for (name, batch), (manifest, manifest_file) in manifests.items():
        labels, proba = max_difference(args, manifest, manifest_file)
        runs = 400 if batch == 1 else 40
        warmup = max(5, runs // 10)
        for threads in (int(t) for t in args.threads.split(",")):
            ours, theirs = [], []
            for r in range(args.rounds):
                order = [(bench_onnxlens, ours, manifest), (bench_ort, theirs, manifest_file)]
                for fn, sink, m in (order if r % 2 == 0 else reversed(order)):
                    sink.append(fn(args, m, threads, warmup, runs)["median_ms"])
            row = {"model": name, "batch": batch, "threads": threads, "onnxlens_ms": statistics.median(ours),
                   "ort_ms": statistics.median(theirs), "label_diffs": labels, "proba_diff": proba}
            rows.append(row)
            print(f"{name} batch {batch}, {threads} thread(s): onnxlens {row['onnxlens_ms']:.4f} ms, "
                  f"ORT {row['ort_ms']:.4f} ms", file=sys.stderr, flush=True)
    print("| model | batch | threads | onnxlens ms | ORT ms | ratio | onnxlens rows/s | labels differing | max prob. diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['threads']} | {r['onnxlens_ms']:.4f} | {r['ort_ms']:.4f} | "
              f"**{r['onnxlens_ms'] / r['ort_ms']:.2f}** | {r['batch'] * 1000 / r['onnxlens_ms']:.0f} | "
              f"{r['label_diffs']} | {r['proba_diff']:.1e} |")


if __name__ == "__main__":
    main()
