#!/usr/bin/python3
"""`onnxlens-cli quantize --report` checked from the outside (ctest app.quantize_agrees_with_numpy).

For the sample CNN (Conv and Gemm, per channel), the tiny BERT (MatMul, per tensor and QDQ) and the
tiny BERT without its test data (seeded random inputs):
  - the int8 model passes onnx 1.12's checker, keeps the float model's inputs, outputs and
    metadata, records its settings, and holds the operators of its format;
  - every figure of report.json is recomputed with numpy from tensors written by
    `onnxlens-cli run --out`: each output (max/mean abs error, cosine, SQNR, top-1 agreement and
    top-5 overlap) and each quantized node's output tensor (its SQNR etc.), both models run with
    the node outputs added as graph outputs by the onnx package;
  - the int8 outputs stay within the stated tolerance of the float ones.

usage: quantize_check.py --cli ONNXLENS_CLI --samples resources/samples
Exits 77 (skipped) when numpy or onnx is missing.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
except ImportError:
    print("numpy and onnx are needed; skipped")
    sys.exit(77)

# The stated tolerance of the int8 models against the float ones, per output.
MIN_SQNR_DB = 20.0
MIN_COSINE = 0.99


def run(cmd, expect=(0,)):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in expect:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def feedable_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def with_outputs(model, names):
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    present = {o.name for o in probe.graph.output}
    for name in names:
        if name not in present:
            probe.graph.output.append(onnx.ValueInfoProto(name=name))
    return probe


def run_probe(cli, model_path, input_names, feeds, out_dir, extra):
    cmd = [cli, "run", model_path, "--threads", "1", "--out", out_dir] + extra
    for name, file in zip(input_names, feeds):
        cmd += ["--input", f"{name}={file}"]
    run(cmd)
    model = onnx.load(model_path, load_external_data=False)
    return {o.name: np.load(os.path.join(out_dir, f"output_{k}.npy")) for k, o in enumerate(model.graph.output)}


class Sums:
    def __init__(self):
        self.n = 0
        self.ref2 = self.act2 = self.dot = self.err2 = self.abs = self.max = 0.0

    def add(self, ref, act):
        ref = ref.astype(np.float64).ravel()
        act = act.astype(np.float64).ravel()
        err = act - ref
        self.n += ref.size
        self.ref2 += float(np.dot(ref, ref))
        self.act2 += float(np.dot(act, act))
        self.dot += float(np.dot(ref, act))
        self.err2 += float(np.dot(err, err))
        self.abs += float(np.abs(err).sum())
        self.max = max(self.max, float(np.abs(err).max()) if err.size else 0.0)

    def figures(self):
        cosine = 1.0 if self.ref2 == 0 and self.act2 == 0 else (
            0.0 if self.ref2 == 0 or self.act2 == 0 else self.dot / math.sqrt(self.ref2 * self.act2))
        sqnr = math.inf if self.err2 == 0 else 10 * math.log10(self.ref2 / self.err2)
        return {"elements": self.n, "max_abs_error": self.max, "mean_abs_error": self.abs / self.n,
                "cosine": cosine, "sqnr_db": sqnr}


def top_k(row, k):
    # Largest first, lower index first on ties (as the engine's topK).
    order = sorted(range(len(row)), key=lambda i: (-row[i], i))
    return order[:k]


def close(ours, theirs, what, rel=1e-6, abs_=1e-9):
    if theirs == "inf":
        theirs = math.inf
    if math.isinf(ours) or math.isinf(theirs):
        assert ours == theirs, f"{what}: numpy {ours}, report {theirs}"
        return
    assert abs(ours - theirs) <= abs_ + rel * abs(ours), f"{what}: numpy {ours!r}, report {theirs!r}"


def check_case(cli, sample_dir, work, label, quantize_args, run_extra=(), copy_without_data=False):
    print(f"== {label}")
    case = os.path.join(work, label)
    os.makedirs(case)
    source = os.path.join(sample_dir, "model.onnx")
    if copy_without_data:
        shutil.copy(source, os.path.join(case, "model.onnx"))
        source = os.path.join(case, "model.onnx")
    int8_path = os.path.join(case, "int8.onnx")
    report_dir = os.path.join(case, "report")
    proc = run([cli, "quantize", source, int8_path, "--report", report_dir, "--no-bench", "--threads", "1",
                "--json", *quantize_args, *run_extra], expect=(0, 1))
    summary = json.loads(proc.stdout)
    with open(os.path.join(report_dir, "report.json")) as f:
        report = json.load(f)
    assert os.path.getsize(os.path.join(report_dir, "report.md")) > 0

    float_model = onnx.load(source)
    int8_model = onnx.load(int8_path)
    onnx.checker.check_model(int8_path)
    assert [i.name for i in int8_model.graph.input] == [i.name for i in float_model.graph.input] or \
        feedable_inputs(int8_model) == feedable_inputs(float_model)
    assert [o.SerializeToString() for o in int8_model.graph.output] == \
        [o.SerializeToString() for o in float_model.graph.output], "outputs changed"
    props = {p.key: p.value for p in int8_model.metadata_props}
    for p in float_model.metadata_props:
        assert props.get(p.key) == p.value, f"metadata {p.key} lost"
    settings = json.loads(props["onnxlens.quantization"])
    ops = {n.op_type for n in int8_model.graph.node}
    if "qdq" in quantize_args:
        assert settings["format"] == "qdq" and "DequantizeLinear" in ops and "DynamicQuantizeLinear" in ops
    else:
        assert settings["format"] == "qoperator" and "DynamicQuantizeLinear" in ops
        assert "MatMulInteger" in ops or "ConvInteger" in ops
    int8_weights = [t for t in int8_model.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) >= 2]
    assert len(int8_weights) >= 1
    total_quantized = sum(summary["quantized_per_op_type"].values())
    assert total_quantized == len(report["nodes"]) == summary["quantized_count"]
    assert summary["bytes_after"] == os.path.getsize(int8_path)
    assert summary["bytes_before"] == os.path.getsize(source)
    close(report["size"]["ratio"], os.path.getsize(source) / os.path.getsize(int8_path), "size ratio")

    # Both models with every quantized node's output as a graph output.
    node_outputs = [n["output"] for n in report["nodes"]]
    probes = {}
    for kind, model in (("float", float_model), ("int8", int8_model)):
        path = os.path.join(case, f"{kind}_probe.onnx")
        onnx.save(with_outputs(model, node_outputs), path)
        probes[kind] = path
    input_names = feedable_inputs(float_model)
    sums = {}
    logits = {}
    for set_name in report["input_sets"]:
        if set_name.startswith("random"):
            seed = set_name.split("seed ")[1].rstrip(")")
            feeds, extra = [], ["--seed", seed, *run_extra]
        else:
            folder = os.path.join(sample_dir, set_name)
            feeds = [os.path.join(folder, f"input_{k}.pb") for k in range(len(input_names))]
            extra = []
        values = {kind: run_probe(cli, probes[kind], input_names, feeds, os.path.join(case, f"{kind}_{set_name}"), extra)
                  for kind in probes}
        for name in [o.name for o in float_model.graph.output] + node_outputs:
            ref, act = values["float"][name], values["int8"][name]
            sums.setdefault(name, Sums()).add(ref, act)
            if name in [o.name for o in float_model.graph.output] and ref.ndim == 2 and ref.shape[1] >= 2 \
                    and ref.dtype.kind == "f":
                stat = logits.setdefault(name, [0, 0, 0.0])
                k = min(5, ref.shape[1])
                for r in range(ref.shape[0]):
                    a, b = top_k(list(ref[r]), k), top_k(list(act[r]), k)
                    stat[0] += 1
                    stat[1] += a[0] == b[0]
                    stat[2] += len(set(a) & set(b)) / k

    for o in report["outputs"]:
        ours = sums[o["name"]].figures()
        for key in ("max_abs_error", "mean_abs_error", "cosine", "sqnr_db"):
            close(ours[key], o[key], f"{label} output {o['name']} {key}")
        assert ours["elements"] == o["elements"]
        if o["name"] in logits:
            rows, top1, top5 = logits[o["name"]]
            assert o["logits"] and o["rows"] == rows
            close(top1 / rows, o["top1_agreement"], f"{label} {o['name']} top-1")
            close(top5 / rows, o["top5_overlap"], f"{label} {o['name']} top-5")
        # The stated tolerance.
        assert ours["sqnr_db"] >= MIN_SQNR_DB, f"{label} {o['name']}: SQNR {ours['sqnr_db']:.1f} dB"
        assert ours["cosine"] >= MIN_COSINE, f"{label} {o['name']}: cosine {ours['cosine']}"
        print(f"   output {o['name']}: SQNR {ours['sqnr_db']:.2f} dB, cosine {ours['cosine']:.6f}, "
              f"max abs {ours['max_abs_error']:.3g}")
    previous = -math.inf
    for n in report["nodes"]:
        ours = sums[n["output"]].figures()
        for key in ("max_abs_error", "mean_abs_error", "cosine", "sqnr_db"):
            close(ours[key], n[key], f"{label} node {n['name']} {key}")
        sqnr = math.inf if n["sqnr_db"] == "inf" else n["sqnr_db"]
        assert sqnr >= previous, "nodes are not weakest first"
        previous = sqnr
    print(f"   {len(report['nodes'])} nodes agree; weakest {report['nodes'][0]['name']} "
          f"{report['nodes'][0]['sqnr_db']:.2f} dB")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--samples", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="onnxlens-quantize-check-")
    try:
        cnn = os.path.join(args.samples, "mnist_cnn")
        bert = os.path.join(args.samples, "tiny_bert")
        check_case(args.cli, cnn, work, "cnn_per_channel", ["--op-types", "MatMul,Gemm,Conv", "--per-channel"])
        check_case(args.cli, bert, work, "bert_per_tensor", [])
        check_case(args.cli, bert, work, "bert_qdq_per_channel", ["--format", "qdq", "--per-channel"])
        check_case(args.cli, bert, work, "bert_random_inputs", [], run_extra=["--dim", "sequence=16", "--dim", "batch=2"],
                   copy_without_data=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("all quantization reports agree with numpy")


if __name__ == "__main__":
    main()
