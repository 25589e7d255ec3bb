#!/usr/bin/python3
"""The int8 tiny-BERT test data (issue 17): the sample quantized as quantize_dynamic writes it, ONNX
Runtime's outputs for it, and the spread of ONNX Runtime's own graph optimization levels, which is
the tolerance tests/engine/QuantizedModelsTest.cpp allows the engine.

usage: int8_tiny_bert_reference.py ORT_DIR [ONNXLENS_CLI]
    ORT_DIR        folder holding node_modules/onnxruntime-node (bench/compare_ort.sh installs one)
    ONNXLENS_CLI   when given, also prints the engine's difference from ONNX Runtime

Writes tests/engine/data/tiny_bert_int8/model.onnx and test_data_set_0/{input,output}_K.pb
(inputs: resources/samples/tiny_bert/test_data_set_0; outputs: ONNX Runtime with graph
optimizations disabled, i.e. running the graph as written).
"""
import glob
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LEVELS = ["all", "extended", "basic", "disabled"]


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ort_dir = os.path.abspath(argv[1])
    sample = os.path.join(REPO, "resources", "samples", "tiny_bert")
    out_dir = os.path.join(REPO, "tests", "engine", "data", "tiny_bert_int8")
    data_dir = os.path.join(out_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    model = os.path.join(out_dir, "model.onnx")
    subprocess.run([sys.executable, os.path.join(HERE, "make_dynamic_int8_model.py"),
                    os.path.join(sample, "model.onnx"), model], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        entries = []
        for f in sorted(glob.glob(os.path.join(sample, "test_data_set_0", "input_*.pb"))):
            shutil.copy(f, data_dir)
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            npy = os.path.join(tmp, t.name + ".npy")
            np.save(npy, numpy_helper.to_array(t))
            entries.append({"name": t.name, "file": npy})
        manifest = os.path.join(tmp, "manifest.json")
        with open(manifest, "w") as fh:
            json.dump({"model": model, "inputs": entries}, fh)
        outputs = {}
        for level in LEVELS:
            dump = os.path.join(tmp, level)
            subprocess.run(["node", os.path.join(HERE, "ort_bench.mjs"), "--ort", ort_dir, "--manifest", manifest,
                            "--warmup", "0", "--runs", "1", "--opt-level", level, "--dump", dump],
                           check=True, stdout=subprocess.DEVNULL)
            outputs[level] = [np.load(f) for f in sorted(glob.glob(os.path.join(dump, "output_*.npy")))]
        names = [o.name for o in onnx.load(model).graph.output]
        for k, array in enumerate(outputs["disabled"]):
            with open(os.path.join(data_dir, "output_%d.pb" % k), "wb") as fh:
                fh.write(numpy_helper.from_array(array, names[k]).SerializeToString())
        print("ONNX Runtime's optimization levels against each other (max |a - b| per output):")
        spread = [0.0] * len(names)
        for a, b in itertools.combinations(LEVELS, 2):
            diffs = [float(np.max(np.abs(x.astype(np.float64) - y))) for x, y in zip(outputs[a], outputs[b])]
            spread = [max(s, d) for s, d in zip(spread, diffs)]
            print("  %-8s vs %-8s %s" % (a, b, " ".join("%.3g" % d for d in diffs)))
        print("spread per output: " + " ".join("%s %.3g" % (n, s) for n, s in zip(names, spread)))
        if len(argv) == 3:
            ours = os.path.join(tmp, "onnxlens")
            flags = sum([["--input", "%s=%s" % (e["name"], e["file"])] for e in entries], [])
            subprocess.run([argv[2], "run", model, "--out", ours] + flags, check=True, stdout=subprocess.DEVNULL)
            for level in ("all", "disabled"):
                for k, name in enumerate(names):
                    mine = np.load(os.path.join(ours, "output_%d.npy" % k))
                    print("onnxlens vs ORT %s, %s: max |a - b| %.3g" %
                          (level, name, float(np.max(np.abs(mine.astype(np.float64) - outputs[level][k])))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
