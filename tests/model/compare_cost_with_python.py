#!/usr/bin/python3
"""`onnxlens-cli cost --json` against an independent count in Python over the same ONNX file.

For each model: the symbolic input dims are bound, onnx's Python shape inference (with data
propagation) gives every shape, and the multiply-accumulates of Conv, ConvTranspose, MatMul,
Gemm and LSTM/GRU/RNN nodes and the unique parameter count and bytes are recomputed from the
spec's definitions with numpy. Totals and per-node MACs must agree exactly.
Usage: compare_cost_with_python.py --cli PATH MODEL[:SYMBOL=N,...]...
"""
import argparse
import json
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, shape_inference


def bind_dims(model, dims):
    inits = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        if value.name in inits:
            continue
        for d in value.type.tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                d.dim_value = dims.get(d.dim_param, 1) if d.dim_param else 1


def shapes_of(model):
    shapes = {}
    g = model.graph
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.name in shapes or not v.type.HasField("tensor_type"):
            continue
        if v.type.tensor_type.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
            shapes[v.name] = dims
    return shapes


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def macs_of(node, shapes):
    op = node.op_type
    if op in ("Conv", "ConvInteger", "QLinearConv"):
        w = shapes[node.input[3 if op == "QLinearConv" else 1]]
        y = shapes[node.output[0]]
        return int(np.prod(y)) * int(np.prod(w[1:]))
    if op == "ConvTranspose":
        x, w = shapes[node.input[0]], shapes[node.input[1]]
        return int(np.prod(x)) * int(np.prod(w[1:]))
    if op in ("MatMul", "MatMulInteger"):
        a, y = shapes[node.input[0]], shapes[node.output[0]]
        return int(np.prod(y)) * a[-1]
    if op == "Gemm":
        a, y = shapes[node.input[0]], shapes[node.output[0]]
        k = a[0] if attr(node, "transA", 0) else a[1]
        return int(np.prod(y)) * k
    if op in ("LSTM", "GRU", "RNN"):
        x = shapes[node.input[0]]
        seq, batch = (x[1], x[0]) if attr(node, "layout", 0) else (x[0], x[1])
        hidden = attr(node, "hidden_size", None)
        dirs = 2 if attr(node, "direction", b"forward") == b"bidirectional" else 1
        gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
        return dirs * seq * batch * gates * hidden * (x[2] + hidden)
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    failures = 0
    for spec in args.models:
        path, _, bindings = spec.partition(":")
        dims = {}
        for item in filter(None, bindings.split(",")):
            k, v = item.split("=")
            dims[k] = int(v)
        cli_args = [args.cli, "cost", "--json", path] + [f"--dim={k}={v}" for k, v in dims.items()]
        doc = json.loads(subprocess.run(cli_args, check=True, capture_output=True, text=True).stdout)
        model = onnx.load(path)
        bind_dims(model, dims)
        inferred = shape_inference.infer_shapes(model, data_prop=True)
        shapes = shapes_of(inferred)
        expected_nodes = [macs_of(n, shapes) for n in inferred.graph.node]
        got_nodes = [int(n["macs"]) for n in doc["nodes"]]
        # Weights: initializers and Constant nodes' tensors (some exporters store weights so).
        inits = {t.name: t for t in model.graph.initializer}
        for n in model.graph.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        inits[n.output[0]] = a.t
        read = {i for n in model.graph.node for i in n.input if i in inits}
        params = sum(int(np.prod(inits[n].dims)) for n in read)
        param_bytes = sum(int(np.prod(inits[n].dims)) * np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[inits[n].data_type]).itemsize
                          for n in read)
        checks = [
            ("total MACs", sum(expected_nodes), int(doc["total"]["macs"])),
            ("per-node MACs", expected_nodes, got_nodes),
            ("parameters", params, doc["total"]["parameters"]),
            ("parameter bytes", param_bytes, doc["total"]["parameter_bytes"]),
            # Every node counted: the totals are totals, not lower bounds.
            ("complete total", True, doc["total_complete"]),
        ]
        for what, want, got in checks:
            status = "ok" if want == got else "MISMATCH"
            if want != got:
                failures += 1
            shown = (want, got) if not isinstance(want, list) else (sum(want), sum(got))
            print(f"{path} {what}: python {shown[0]} onnxlens {shown[1]} {status}")
    print(f"{len(args.models) * 5 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
