#!/usr/bin/env python3
"""Heap allocations per run of `onnxlens-cli bench`, counted, not timed: bench/malloc_count.c is
built with the system C compiler and loaded with LD_PRELOAD into two benches of the same model that
differ only in their run counts; the difference divided by the extra runs is one run's allocations
(load and warm-up cancel out). Exact and independent of the machine's load, so it shows per-run
overhead on a noisy machine where timings cannot. With --sites, also where they come from (the
first caller outside libstdc++, named with addr2line; --caller N names the Nth caller above it).

usage: allocations_per_run.py --cli PATH [--cache DIR] [--models a,b] [--threads N] [--sites K]
       [--caller N] [--build BUILD=PATH ...]
  --cache   the bench cache of compare_ort.py (models and their input manifests)
  --build   compare builds: NAME=path/to/onnxlens-cli, repeatable (instead of --cli)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = "small_cnn,vad_stream,mobilenet_v2,mobilenet_v2_qop,recognizer,detector,minilm_seq16"


def build_counter(directory):
    library = os.path.join(directory, "malloc_count.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "malloc_count.c"), "-o",
                    library, "-ldl"], check=True)
    return library


def input_flags(manifest):
    flags = []
    for entry in manifest["inputs"]:
        flags += ["--input", "%s=%s" % (entry["name"], entry["file"])]
    return flags


def count(cli, library, manifest, threads, runs, sites_file=None, caller=0):
    env = dict(os.environ, LD_PRELOAD=library, ONNXLENS_ADAPTIVE_THREADS="0")
    if sites_file:
        env["MALLOC_COUNT_SITES"] = sites_file
        env["MALLOC_COUNT_CALLER"] = str(caller)
    proc = subprocess.run([cli, "bench", manifest["model"], "--json", "--threads", str(threads),
                           "--warmup", "5", "--runs", str(runs)] + input_flags(manifest),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit("bench failed (%d): %s" % (proc.returncode, proc.stderr.strip()))
    for line in proc.stderr.splitlines():
        if line.startswith("MALLOC_COUNT "):
            return int(line.split()[1])
    raise SystemExit("the counter reported nothing (LD_PRELOAD ignored?)")


def read_sites(path):
    sites = {}
    with open(path) as f:
        for line in f:
            number, library, offset = line.split()
            sites[(library, offset)] = int(number)
    return sites


def site_name(library, offset):
    out = subprocess.run(["addr2line", "-f", "-C", "-e", library, hex(int(offset, 16) - 1)],
                         stdout=subprocess.PIPE, text=True).stdout.splitlines()
    return (out[0] if out else "?")[:140]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli")
    parser.add_argument("--build", action="append", default=[])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/onnxlens-bench"))
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sites", type=int, default=0, help="list the K busiest allocation sites")
    parser.add_argument("--caller", type=int, default=0,
                        help="with --sites: name the Nth caller above the allocating code (0-16)")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.build] or [["onnxlens", args.cli]]
    if any(len(b) != 2 or not b[1] for b in builds):
        parser.error("give --cli PATH or --build NAME=PATH")
    few, many = 50, 250
    with tempfile.TemporaryDirectory() as tmp:
        library = build_counter(tmp)
        print("| model | threads | " + " | ".join("%s allocations / run" % name for name, _ in builds) + " |")
        print("|---|---|" + "---|" * len(builds))
        for model in args.models.split(","):
            with open(os.path.join(args.cache, "inputs", model, "manifest.json")) as f:
                manifest = json.load(f)
            cells = []
            for name, cli in builds:
                low_sites = os.path.join(tmp, "low") if args.sites else None
                high_sites = os.path.join(tmp, "high") if args.sites else None
                low = count(cli, library, manifest, args.threads, few, low_sites, args.caller)
                high = count(cli, library, manifest, args.threads, many, high_sites, args.caller)
                cells.append("%.0f" % ((high - low) / (many - few)))
                if args.sites:
                    a, b = read_sites(low_sites), read_sites(high_sites)
                    rows = sorted(((b[k] - a.get(k, 0)) / (many - few), k) for k in b)
                    for per_run, (lib, offset) in reversed(rows[-args.sites:]):
                        if per_run >= 0.5:
                            print("  %s %s: %.1f / run  %s (%s)" % (model, name, per_run,
                                                                   site_name(lib, offset), os.path.basename(lib)),
                                  file=sys.stderr)
            print("| %s | %d | %s |" % (model, args.threads, " | ".join(cells)))


if __name__ == "__main__":
    main()
