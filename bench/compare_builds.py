#!/usr/bin/python3
"""Two or more onnxlens builds on the same models, alternating (issue 31, part 4: the portable build
against the native one).

    bench/compare_builds.py --cache DIR \\
        --build native=build/release/app/onnxlens-cli \\
        --build portable=build/portable/app/onnxlens-cli \\
        --build portable-baseline=build/portable/app/onnxlens-cli:ONNXLENS_CPU_ISA=baseline \\
        [--models small_cnn,vad,...] [--threads 1] [--rounds 7] [--runs-scale 1.0]

Each round runs `onnxlens-cli bench --json` once per build, in a fresh process, the builds' order
rotating from round to round; a row gives each build's median over the rounds of its per-round
median latency, the spread (min-max of the per-round medians, a measure of the machine's noise),
and each build's ratio to the first build. A build is NAME=CLI or NAME=CLI:VAR=VALUE (an
environment variable for that build's runs, e.g. ONNXLENS_CPU_ISA=baseline to run a portable build
with its baseline kernels). CLI may also be a tree's bench/ModelTimer (the engine alone, the same
median of Session::run). Models and inputs come from bench/make_bench_models.py (the cache of
compare_ort.sh can be shared: --cache ~/.cache/onnxlens-bench).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ort  # noqa: E402  (RUNS per model, input flags)
import make_bench_models  # noqa: E402


def parse_build(text):
    name, _, rest = text.partition("=")
    cli, _, env = rest.partition(":")
    extra = {}
    if env:
        key, _, value = env.partition("=")
        extra[key] = value
    if not name or not cli:
        raise SystemExit("--build wants NAME=CLI[:VAR=VALUE], got " + text)
    return name, cli, extra


def bench(cli, extra_env, manifest, threads, warmup, runs):
    env = dict(os.environ, **extra_env)
    if os.path.basename(cli) == "ModelTimer":  # bench/ModelTimer.cpp: the engine alone
        cmd = [cli, manifest["model"], str(warmup), str(runs), str(threads)] + [
            "%s=%s" % (entry["name"], entry["file"]) for entry in manifest["inputs"]]
    else:
        cmd = [cli, "bench", manifest["model"], "--json", "--threads", str(threads), "--warmup", str(warmup),
               "--runs", str(runs)] + compare_ort.input_flags(manifest)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stderr.strip()))
    return json.loads(proc.stdout)["median_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", required=True, help="NAME=CLI[:VAR=VALUE] (repeat)")
    parser.add_argument("--models", default="small_cnn,vad,vad_stream,lstm,mobilenet_v2,recognizer,minilm_seq16")
    parser.add_argument("--threads", default="1")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs-scale", type=float, default=1.0, help="scale compare_ort's runs per round")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    builds = [parse_build(b) for b in args.build]
    make_bench_models.CLI = builds[0][1]
    rows = []
    for name in args.models.split(","):
        with open(make_bench_models.prepare(args.cache, name)) as f:
            manifest = json.load(f)
        runs = max(5, int(compare_ort.RUNS[name] * args.runs_scale))
        warmup = max(2, runs // 10)
        for threads in (int(t) for t in args.threads.split(",")):
            samples = {b[0]: [] for b in builds}
            for r in range(args.rounds):
                order = builds[r % len(builds):] + builds[:r % len(builds)]
                for build_name, cli, extra in order:
                    samples[build_name].append(bench(cli, extra, manifest, threads, warmup, runs))
            row = {"model": name, "threads": threads, "runs": runs, "rounds": args.rounds, "samples": samples}
            rows.append(row)
            print("%s, %d thread(s): %s" % (name, threads, ", ".join(
                "%s %.3f ms" % (b, statistics.median(s)) for b, s in samples.items())), file=sys.stderr, flush=True)
    names = [b[0] for b in builds]
    print("| model | threads | " + " | ".join("%s ms (spread)" % n for n in names) + " | " +
          " | ".join("%s / %s" % (n, names[0]) for n in names[1:]) + " |")
    print("|---|---|" + "---|" * (2 * len(names) - 1))
    ratios = {n: [] for n in names[1:]}
    for row in rows:
        med = {n: statistics.median(row["samples"][n]) for n in names}
        cells = ["%.3f (%.3f-%.3f)" % (med[n], min(row["samples"][n]), max(row["samples"][n])) for n in names]
        for n in names[1:]:
            ratios[n].append(med[n] / med[names[0]])
        print("| %s | %d | %s | %s |" % (row["model"], row["threads"], " | ".join(cells),
                                         " | ".join("**%.3f**" % (med[n] / med[names[0]]) for n in names[1:])))
    geo = lambda xs: float(statistics.geometric_mean(xs)) if xs else float("nan")  # noqa: E731
    print("| geometric mean | | " + " | ".join("" for _ in names) + " | " +
          " | ".join("**%.3f**" % geo(ratios[n]) for n in names[1:]) + " |")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
