#!/usr/bin/python3
"""`onnxlens-cli generate` against the same greedy loop on ONNX Runtime (issue 30).

  agreement  (default) the tiny decoders of make_decoder_models.py (GPT-2 style with optimum
             names, the same with the stacked past.N cache, Llama style with grouped kv heads and
             past_k_N names; genai: make_genai_decoder.py's int4 GroupQueryAttention layout, tiny
             here, the 0.5 GB one with --speed): the same prompt, 32 new tokens on both engines; the generated ids
             must be equal and every run's last-position logits within |a - e| <= atol + rtol |e|
  --speed    the ~30 M-parameter decoders: tokens per second of both loops at each thread count,
             several rounds alternating which engine goes first, each round a fresh process of
             each; prints a Markdown table of medians

ONNX Runtime (npm onnxruntime-node 1.30) runs bench/ort_decode.mjs; it is found in
ONNXLENS_ORT_DIR, else installed into the cache folder as bench/compare_ort.sh does. Models are
made into the cache folder (ONNXLENS_BENCH_CACHE, default ~/.cache/onnxlens-bench/decoders).

usage: compare_decode_ort.py [--speed] [--threads 1,2] [--rounds N] [--new-tokens M]
                             [--prompt-tokens N] [--kinds gpt2,gpt2_stacked,llama,genai] [--json-out FILE]
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
ATOL, RTOL = 1e-4, 1e-3


def run_json(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr.strip()))
    return json.loads(proc.stdout)


def ort_dir(cache):
    ort = os.environ.get("ONNXLENS_ORT_DIR") or os.path.join(os.path.dirname(cache), "ort")
    if not os.path.isfile(os.path.join(ort, "node_modules", "onnxruntime-node", "package.json")):
        os.makedirs(ort, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", ort, "--ignore-scripts", "--no-audit", "--no-fund",
                        "onnxruntime-node@1.30"], check=True, stdout=sys.stderr)
    return ort


def make_models(cache, size, kinds):
    folder = os.path.join(cache, size)
    missing = [k for k in kinds if not os.path.isfile(os.path.join(folder, k + ".json"))]
    if "genai" in missing:  # make_genai_decoder.py: the onnxruntime-genai CPU int4 layout
        missing.remove("genai")
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_genai_decoder.py"),
                        os.path.join(folder, "genai")] + (["--tiny"] if size == "tiny" else []) +
                       ["--manifest", os.path.join(folder, "genai.json")], check=True, stdout=sys.stderr)
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_decoder_models.py"), folder,
                        "--size", size, "--kinds", ",".join(missing)], check=True, stdout=sys.stderr,
                       stderr=subprocess.DEVNULL)
    return {k: os.path.join(folder, k + ".json") for k in kinds}


def prompt_ids(vocab, count, seed=7):
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.integers(0, vocab, count)]


def onnxlens_generate(args, manifest, prompt, new_tokens, threads, logits=None):
    cmd = [args.cli, "generate", manifest["model"], "--prompt-ids", ",".join(map(str, prompt)),
           "--new-tokens", str(new_tokens), "--threads", str(threads), "--json"]
    if logits:
        cmd += ["--logits", logits]
    return run_json(cmd)


def ort_generate(args, manifest_file, prompt, new_tokens, threads, logits=None):
    cmd = ["node", os.path.join(HERE, "ort_decode.mjs"), "--ort", args.ort, "--manifest", manifest_file,
           "--prompt-ids", ",".join(map(str, prompt)), "--new-tokens", str(new_tokens), "--threads", str(threads)]
    if logits:
        cmd += ["--logits", logits]
    return run_json(cmd)


def agreement(args):
    rows = []
    ok = True
    for kind, manifest_file in make_models(args.cache, "tiny", args.kinds).items():
        manifest = json.load(open(manifest_file))
        prompt = prompt_ids(manifest["vocab"], args.prompt_tokens)
        with tempfile.TemporaryDirectory() as tmp:
            ours_file, theirs_file = os.path.join(tmp, "onnxlens.npy"), os.path.join(tmp, "ort.npy")
            ours = onnxlens_generate(args, manifest, prompt, args.new_tokens, 1, ours_file)
            theirs = ort_generate(args, manifest_file, prompt, args.new_tokens, 1, theirs_file)
            a, e = np.load(ours_file).astype(np.float64), np.load(theirs_file).astype(np.float64)
        same_ids = ours["generated_ids"] == theirs["generated_ids"]
        first_diff = next((i for i, (x, y) in enumerate(zip(ours["generated_ids"], theirs["generated_ids"]))
                           if x != y), None)
        steps = min(len(a), len(e)) if first_diff is None else first_diff + 1
        diff = np.abs(a[:steps] - e[:steps])
        within = bool(np.all(diff <= ATOL + RTOL * np.abs(e[:steps])))
        top = np.sort(e, axis=1)
        rows.append({"model": kind, "steps": len(ours["generated_ids"]), "ids_equal": same_ids,
                     "first_different_step": first_diff, "max_abs_diff": float(diff.max()),
                     "max_rel_diff": float((diff / np.maximum(np.abs(e[:steps]), 1e-6)).max()),
                     "logits_within_tolerance": within,
                     "smallest_top2_gap": float((top[:, -1] - top[:, -2]).min()),
                     "ids": ours["generated_ids"]})
        ok = ok and same_ids and within
    print("| decoder | runs | ids equal | max abs diff | max rel diff | within atol %g + rtol %g | smallest top-2 gap |"
          % (ATOL, RTOL))
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %s | %.2e | %.2e | %s | %.4f |" % (
            r["model"], r["steps"], "yes" if r["ids_equal"] else "no (step %d)" % r["first_different_step"],
            r["max_abs_diff"], r["max_rel_diff"], "yes" if r["logits_within_tolerance"] else "NO",
            r["smallest_top2_gap"]))
    return rows, ok


def speed(args):
    rows = []
    for kind, manifest_file in make_models(args.cache, "30m", args.kinds).items():
        manifest = json.load(open(manifest_file))
        prompt = prompt_ids(manifest["vocab"], args.prompt_tokens)
        for threads in args.threads:
            ours, theirs = [], []
            same_ids = True
            for rnd in range(args.rounds):
                order = [0, 1] if rnd % 2 == 0 else [1, 0]
                for side in order:
                    if side == 0:
                        doc = onnxlens_generate(args, manifest, prompt, args.new_tokens, threads)
                        ours.append(doc)
                    else:
                        doc = ort_generate(args, manifest_file, prompt, args.new_tokens, threads)
                        theirs.append(doc)
                same_ids = same_ids and ours[-1]["generated_ids"] == theirs[-1]["generated_ids"]
            med = lambda docs, key: statistics.median(d[key] for d in docs)
            row = {"model": kind, "parameters_m": manifest["parameters"] / 1e6, "threads": threads,
                   "rounds": args.rounds, "new_tokens": args.new_tokens, "prompt_tokens": args.prompt_tokens,
                   "onnxlens_tokens_per_second": med(ours, "tokens_per_second"),
                   "ort_tokens_per_second": med(theirs, "tokens_per_second"),
                   "onnxlens_step_median_ms": statistics.median(d["steps"]["median_ms"] for d in ours),
                   "ort_step_median_ms": med(theirs, "step_median_ms"),
                   "onnxlens_prefill_ms": med(ours, "prefill_ms"), "ort_prefill_ms": med(theirs, "prefill_ms"),
                   "onnxlens_tokens_per_second_all": [d["tokens_per_second"] for d in ours],
                   "ort_tokens_per_second_all": [d["tokens_per_second"] for d in theirs],
                   "ids_equal": same_ids}
            rows.append(row)
            print("%s %d threads: onnxlens %.1f tok/s, ORT %.1f tok/s" % (
                kind, threads, row["onnxlens_tokens_per_second"], row["ort_tokens_per_second"]), file=sys.stderr)
    print("| decoder | threads | onnxlens tokens/s | ORT tokens/s | ratio | onnxlens step ms | ORT step ms "
          "| onnxlens prefill ms | ORT prefill ms | ids equal |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s (%.1f M) | %d | %.1f | %.1f | %.2f | %.3f | %.3f | %.2f | %.2f | %s |" % (
            r["model"], r["parameters_m"], r["threads"], r["onnxlens_tokens_per_second"],
            r["ort_tokens_per_second"], r["onnxlens_tokens_per_second"] / r["ort_tokens_per_second"],
            r["onnxlens_step_median_ms"], r["ort_step_median_ms"], r["onnxlens_prefill_ms"],
            r["ort_prefill_ms"], "yes" if r["ids_equal"] else "no"))
    return rows, True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--new-tokens", type=int)
    parser.add_argument("--prompt-tokens", type=int)
    parser.add_argument("--kinds")
    parser.add_argument("--json-out")
    parser.add_argument("--cli", default=os.environ.get("ONNXLENS_CLI",
                                                        os.path.join(REPO, "build", "release", "app", "onnxlens-cli")))
    args = parser.parse_args()
    base = os.environ.get("ONNXLENS_BENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnxlens-bench")
    args.cache = os.path.join(base, "decoders")
    args.ort = ort_dir(args.cache)
    args.threads = [int(t) for t in args.threads.split(",")]
    args.kinds = (args.kinds or ("gpt2,llama" if args.speed else "gpt2,gpt2_stacked,llama")).split(",")
    if args.new_tokens is None:
        args.new_tokens = 64 if args.speed else 32
    if args.prompt_tokens is None:
        args.prompt_tokens = 16 if args.speed else 8
    if not os.access(args.cli, os.X_OK):
        raise SystemExit("compare_decode_ort.py: %s is missing; build onnxlens-cli first" % args.cli)
    rows, ok = speed(args) if args.speed else agreement(args)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
