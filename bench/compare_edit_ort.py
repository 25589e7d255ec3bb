#!/usr/bin/python3
"""Edited models in ONNX Runtime against the originals (issue 32): every model `onnxlens-cli edit`
saves where the edit keeps the semantics runs in ONNX Runtime 1.30 with the original's outputs,
and in onnxlens with ONNX Runtime's.

Cases (the sample models and the PyTorch export that bakes its batch into a Reshape):
  rename/set-dim/set-attr/metadata  mnist_cnn, the same log_probs
  add-output                        mnist_cnn, log_probs unchanged and the new output present
  delete (bypass)                   mnist_cnn without LogSoftmax = the original's Gemm output
  extract                           mnist_cnn from /MaxPool_1_output_0, fed the original's tensor
  opset 13 -> 15                    mnist_cnn, the same log_probs
  cleanup + set-dim                 tiny_bert at batch 2, sequence 16; squeezenet1_1 and
                                    lstm_classifier with --cleanup and a rename
  make-batch-dynamic                fixed_batch.onnx: batch 4 in one run against each sample
                                    run alone in the original

Prints one line per case: the largest |edited - original| in ONNX Runtime, and the largest
|onnxlens(edited) - ORT(edited)|; exits 1 when a case's difference exceeds its tolerance.

usage: compare_edit_ort.py --cli PATH --ort DIR [--work DIR]
  --ort  folder holding node_modules/onnxruntime-node (as bench/compare_ort.py)
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
REPO = os.path.dirname(HERE)
SAMPLES = os.path.join(REPO, "resources", "samples")
FIXED_BATCH = os.path.join(REPO, "tests", "engine", "data", "dynamic_axes", "fixed_batch.onnx")


def sample(name):
    return os.path.join(SAMPLES, name, "model.onnx")


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s%s" % (proc.returncode, " ".join(cmd), proc.stdout, proc.stderr))
    return proc.stdout


class Runner:
    def __init__(self, args):
        self.args = args
        self.count = 0

    def scratch(self):
        self.count += 1
        path = os.path.join(self.args.work, "r%03d" % self.count)
        os.makedirs(path, exist_ok=True)
        return path

    def write_feeds(self, feeds):
        folder = self.scratch()
        files = {}
        for name, value in feeds.items():
            files[name] = os.path.join(folder, "in_%d.npy" % len(files))
            np.save(files[name], value)
        return folder, files

    def ort(self, model, feeds):
        folder, files = self.write_feeds(feeds)
        manifest = os.path.join(folder, "manifest.json")
        with open(manifest, "w") as f:
            json.dump({"model": model, "inputs": [{"name": n, "file": p} for n, p in files.items()]}, f)
        dump = os.path.join(folder, "ort")
        run(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", self.args.ort, "--manifest", manifest,
             "--threads", "1", "--warmup", "0", "--runs", "1", "--dump", dump])
        names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
        return {n: np.load(os.path.join(dump, "output_%d.npy" % k)) for k, n in enumerate(names)}

    def onnxlens(self, model, feeds):
        folder, files = self.write_feeds(feeds)
        out = os.path.join(folder, "lens")
        flags = []
        for name, path in files.items():
            flags += ["--input", "%s=%s" % (name, path)]
        run([self.args.cli, "run", model, "--out", out] + flags)
        names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
        return {n: np.load(os.path.join(out, "output_%d.npy" % k)) for k, n in enumerate(names)}

    def edit(self, model, *flags):
        out = os.path.join(self.scratch(), "edited.onnx")
        run([self.args.cli, "edit", model, out] + list(flags))
        run([self.args.cli, "check", out])
        return out


def max_diff(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--ort", required=True)
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    if args.work is None:
        args.work = tempfile.mkdtemp(prefix="compare_edit_ort_")
    r = Runner(args)
    rng = np.random.default_rng(0)
    image = rng.standard_normal((2, 1, 28, 28)).astype(np.float32)
    rows = []
    failed = False

    def report(case, ort_diff, lens_diff, tolerance=1e-5):
        nonlocal failed
        ok = ort_diff <= tolerance and lens_diff <= 1e-4
        failed = failed or not ok
        rows.append((case, ort_diff, lens_diff, "ok" if ok else "FAIL"))

    original = r.ort(sample("mnist_cnn"), {"image": image})["log_probs"]

    edited = r.edit(sample("mnist_cnn"), "--rename", "image=pixels", "--set-dim", "pixels:0=2",
                    "--set-attr", "/conv1/Conv.dilations=[1,1]", "--metadata", "author=compare_edit_ort")
    got = r.ort(edited, {"pixels": image})["log_probs"]
    lens = r.onnxlens(edited, {"pixels": image})["log_probs"]
    report("mnist rename + set-dim + set-attr + metadata", max_diff(got, original), max_diff(lens, got))

    exposed = r.edit(sample("mnist_cnn"), "--add-output", "/fc2/Gemm_output_0", "--add-output",
                     "/MaxPool_1_output_0")
    exposed_out = r.ort(exposed, {"image": image})
    lens = r.onnxlens(exposed, {"image": image})
    report("mnist add-output (log_probs unchanged)", max_diff(exposed_out["log_probs"], original),
           max(max_diff(lens[n], exposed_out[n]) for n in exposed_out))

    no_softmax = r.edit(sample("mnist_cnn"), "--delete", "/LogSoftmax")
    got = r.ort(no_softmax, {"image": image})["log_probs"]
    lens = r.onnxlens(no_softmax, {"image": image})["log_probs"]
    report("mnist delete LogSoftmax (bypass) = Gemm output", max_diff(got, exposed_out["/fc2/Gemm_output_0"]),
           max_diff(lens, got))

    part = r.edit(sample("mnist_cnn"), "--extract-input", "/MaxPool_1_output_0", "--extract-output", "log_probs")
    feed = {"/MaxPool_1_output_0": exposed_out["/MaxPool_1_output_0"]}
    got = r.ort(part, feed)["log_probs"]
    lens = r.onnxlens(part, feed)["log_probs"]
    report("mnist extract /MaxPool_1_output_0 -> log_probs", max_diff(got, original), max_diff(lens, got))

    converted = r.edit(sample("mnist_cnn"), "--opset", "15")
    got = r.ort(converted, {"image": image})["log_probs"]
    lens = r.onnxlens(converted, {"image": image})["log_probs"]
    report("mnist opset 13 -> 15", max_diff(got, original), max_diff(lens, got))

    ids = rng.integers(0, 10, (2, 16)).astype(np.int64)
    mask = np.ones((2, 16), dtype=np.int64)
    mask[1, 12:] = 0
    bert_feeds = {"input_ids": ids, "attention_mask": mask}
    bert = r.ort(sample("tiny_bert"), bert_feeds)
    fixed = r.edit(sample("tiny_bert"), "--set-dim", "input_ids:0=2", "--set-dim", "input_ids:1=16",
                   "--set-dim", "attention_mask:0=2", "--set-dim", "attention_mask:1=16", "--cleanup")
    got = r.ort(fixed, bert_feeds)
    lens = r.onnxlens(fixed, bert_feeds)
    report("tiny_bert set-dim 2x16 + cleanup", max(max_diff(got[n], bert[n]) for n in bert),
           max(max_diff(lens[n], got[n]) for n in got))

    pixels = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    squeeze = r.ort(sample("squeezenet1_1"), {"image": pixels})["logits"]
    cleaned = r.edit(sample("squeezenet1_1"), "--cleanup", "--rename", "logits=scores")
    got = r.ort(cleaned, {"image": pixels})["scores"]
    lens = r.onnxlens(cleaned, {"image": pixels})["scores"]
    report("squeezenet1_1 cleanup + rename output", max_diff(got, squeeze), max_diff(lens, got), 1e-4)

    sequence = rng.standard_normal((3, 10, 16)).astype(np.float32)
    lstm = r.ort(sample("lstm_classifier"), {"sequence": sequence})["logits"]
    lstm_fixed = r.edit(sample("lstm_classifier"), "--set-dim", "sequence:0=3", "--cleanup", "--prune")
    got = r.ort(lstm_fixed, {"sequence": sequence})["logits"]
    lens = r.onnxlens(lstm_fixed, {"sequence": sequence})["logits"]
    report("lstm_classifier set-dim + cleanup + prune", max_diff(got, lstm), max_diff(lens, got))

    x = rng.standard_normal((4, 12)).astype(np.float32)
    dynamic = r.edit(FIXED_BATCH, "--make-batch-dynamic")
    whole = r.ort(dynamic, {"x": x})["y"]
    lens = r.onnxlens(dynamic, {"x": x})["y"]
    alone = np.concatenate([r.ort(FIXED_BATCH, {"x": x[i:i + 1]})["y"] for i in range(4)])
    report("fixed_batch make-batch-dynamic, batch 4 vs each alone", max_diff(whole, alone), max_diff(lens, whole))

    width = max(len(row[0]) for row in rows)
    print("%-*s  %14s  %18s" % (width, "case", "ORT edited-orig", "onnxlens vs ORT"))
    for case, ort_diff, lens_diff, verdict in rows:
        print("%-*s  %14.3g  %18.3g  %s" % (width, case, ort_diff, lens_diff, verdict))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
