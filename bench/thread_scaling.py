#!/usr/bin/python3
"""Thread scaling against ONNX Runtime (issue 31): median latency of `onnxlens-cli bench` and of ONNX
Runtime's Python session (all graph optimizations, intra-op threads = N, inter-op 1) on the same
inputs, at several thread counts, in fresh alternating processes; optionally onnxlens under other
settings (environment variables) beside its default, to choose a setting on a machine with many cores.

  thread_scaling.py layout CACHE OUT [MODEL...]
      copies CACHE/models/NAME/model.onnx (or the model its manifest names) and its inputs
      (CACHE/inputs/NAME/*.npy, made by make_bench_models.py) to OUT/NAME/, with a manifest of
      relative paths, so that the folder can be moved to another machine
  thread_scaling.py run --cli CLI --models OUT [--threads 1,4,8,16] [--config NAME[@T,T]:VAR=V,...]
                        [--rounds 2] [--target-ms 300] [--budget-s 600] [--jsonl FILE] [MODEL...]
      one JSON line per (model, threads): ORT's and each setting's median ms (the minimum over
      rounds of each process's median) and ratio = onnxlens / ORT; a Markdown table at the end.
      A --config runs at the thread counts after '@' (default: every count above 1).

Needs python3 with numpy and onnxruntime (run) and nothing else; the layout step needs numpy.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ORT_SCRIPT = r'''
import json, sys, time
import numpy as np, onnxruntime as ort
folder, threads, warmup, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
manifest = json.load(open(folder + "/manifest.json"))
options = ort.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(folder + "/" + manifest["model"], options, providers=["CPUExecutionProvider"])
feeds = {e["name"]: np.load(folder + "/" + e["file"]) for e in manifest["inputs"]}
for _ in range(warmup):
    session.run(None, feeds)
times = []
for _ in range(runs):
    start = time.perf_counter()
    session.run(None, feeds)
    times.append((time.perf_counter() - start) * 1e3)
print(json.dumps({"median_ms": float(np.median(times)), "min_ms": float(min(times))}))
'''


def layout(cache, out, names):
    names = names or sorted(os.listdir(os.path.join(cache, "inputs")))
    for name in names:
        source = os.path.join(cache, "inputs", name, "manifest.json")
        if not os.path.exists(source):
            print("skipped %s: no %s" % (name, source), file=sys.stderr)
            continue
        manifest = json.load(open(source))
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(manifest["model"], os.path.join(folder, "model.onnx"))
        inputs = []
        for entry in manifest["inputs"]:
            file = os.path.basename(entry["file"])
            shutil.copyfile(entry["file"], os.path.join(folder, file))
            inputs.append({"name": entry["name"], "file": file})
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump({"model": "model.onnx", "inputs": inputs}, f, indent=1)
        print(folder)


def parse_config(text):
    head, _, assignments = text.partition(":")
    name, _, counts = head.partition("@")
    env = dict(a.split("=", 1) for a in assignments.split(",") if a)
    return {"name": name, "threads": [int(t) for t in counts.split(",")] if counts else None, "env": env}


def run_onnxlens(cli, folder, threads, runs, env):
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    cmd = [cli, "bench", os.path.join(folder, manifest["model"]), "--json", "--threads", str(threads),
           "--warmup", "5", "--runs", str(runs)]
    for e in manifest["inputs"]:
        cmd += ["--input", "%s=%s" % (e["name"], os.path.join(folder, e["file"]))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    if proc.returncode != 0:
        return "error: " + proc.stderr.strip()[-300:]
    return json.loads(proc.stdout)["median_ms"]


def run_ort(script, folder, threads, runs):
    proc = subprocess.run([sys.executable, script, folder, str(threads), "5", str(runs)], capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        return "error: " + proc.stderr.strip()[-300:]
    return json.loads(proc.stdout)["median_ms"]


def run(args):
    script = os.path.join(os.environ.get("TMPDIR", "/tmp"), "thread_scaling_ort.py")
    with open(script, "w") as f:
        f.write(ORT_SCRIPT)
    threads = [int(t) for t in args.threads.split(",")]
    configs = [{"name": "onnxlens", "threads": None, "env": {}}] + [parse_config(c) for c in args.config]
    names = args.models_list or sorted(d for d in os.listdir(args.models)
                                       if os.path.exists(os.path.join(args.models, d, "manifest.json")))
    deadline = time.time() + args.budget_s
    rows = []
    jsonl = open(args.jsonl, "a") if args.jsonl else None
    for name in names:
        if time.time() > deadline:
            print("budget spent: %s and later models not run" % name, file=sys.stderr)
            break
        folder = os.path.join(args.models, name)
        if not os.path.exists(os.path.join(folder, "manifest.json")):
            print("skipped %s: no %s" % (name, os.path.join(folder, "manifest.json")), file=sys.stderr)
            continue
        estimate = run_ort(script, folder, threads[0], 10)
        runs = 20
        if isinstance(estimate, float):
            runs = int(min(2000, max(10, args.target_ms / max(estimate, 1e-3))))
        for count in threads:
            jobs = [("ort", None)] + [(c["name"], c) for c in configs
                                      if c["name"] == "onnxlens" or
                                      (count in c["threads"] if c["threads"] else count > 1)]
            results = {job: [] for job, _ in jobs}
            for rnd in range(args.rounds):
                for job, config in (jobs if rnd % 2 == 0 else list(reversed(jobs))):
                    if job == "ort":
                        results[job].append(run_ort(script, folder, count, runs))
                    else:
                        results[job].append(run_onnxlens(args.cli, folder, count, runs, config["env"]))
            row = {"model": name, "threads": count, "runs": runs}
            for job, values in results.items():
                numbers = [v for v in values if isinstance(v, float)]
                row[job] = round(min(numbers), 4) if numbers else values[-1]
            for job, _ in jobs[1:]:
                if isinstance(row[job], float) and isinstance(row["ort"], float):
                    row[job + "_ratio"] = round(row[job] / row["ort"], 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if jsonl:
                jsonl.write(json.dumps(row) + "\n")
                jsonl.flush()
    table(rows, configs)


def table(rows, configs):
    names = [c["name"] for c in configs]
    print("\n| model | threads | ORT ms | " + " | ".join("%s ms (ratio)" % n for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for row in rows:
        cells = []
        for n in names:
            if n not in row:
                cells.append("")
            elif isinstance(row[n], float):
                cells.append("%.3f (%s)" % (row[n], row.get(n + "_ratio", "?")))
            else:
                cells.append(str(row[n])[:60])
        ort = "%.3f" % row["ort"] if isinstance(row["ort"], float) else str(row["ort"])[:60]
        print("| %s | %d | %s | %s |" % (row["model"], row["threads"], ort, " | ".join(cells)))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "layout":
        if len(sys.argv) < 4:
            print(__doc__.strip(), file=sys.stderr)
            return 2
        layout(sys.argv[2], sys.argv[3], sys.argv[4:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--threads", default="1,4,8,16")
    parser.add_argument("--config", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--target-ms", type=float, default=300.0)
    parser.add_argument("--budget-s", type=float, default=600.0)
    parser.add_argument("--jsonl")
    parser.add_argument("models_list", nargs="*")
    run(parser.parse_intermixed_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
