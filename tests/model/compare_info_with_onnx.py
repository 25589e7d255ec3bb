#!/usr/bin/python3
"""Runs `onnxlens-cli info --json` on every model.onnx under the given folders and compares it
with what the onnx Python package reads from the same file: IR version, producer, opsets,
inputs (initializers excluded) and outputs with dtype and shape, dynamic axes, node count and
initializer count. Any difference, or a model the CLI cannot read, fails.

usage: compare_info_with_onnx.py --cli PATH [--every N] DIR...
--every N checks every Nth model of the sorted list (the sanitized build: one CLI start per model
under ASan is about a second, and all of them would exceed the test's time limit).
"""
import argparse
import json
import os
import subprocess
import sys

try:
    import onnx
    from onnx import TensorProto
except ImportError:
    print("skipped: the onnx Python package is not installed for", sys.executable)
    sys.exit(77)  # ctest's SKIP_RETURN_CODE

# numpy-style names, derived from the onnx enum names independently of onnxlens.
_RENAMED = {"FLOAT": "float32", "DOUBLE": "float64", "FLOAT16": "float16"}


def elem_name(elem_type):
    if elem_type == TensorProto.UNDEFINED:
        return "undefined"
    enum = TensorProto.DataType.Name(elem_type)
    return _RENAMED.get(enum, enum.lower())


def type_name(t):
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        return elem_name(t.tensor_type.elem_type)
    if kind == "sequence_type":
        return "sequence<%s>" % type_name(t.sequence_type.elem_type)
    if kind == "map_type":
        return "map<%s,%s>" % (elem_name(t.map_type.key_type), type_name(t.map_type.value_type))
    if kind == "optional_type":
        return "optional<%s>" % type_name(t.optional_type.elem_type)
    if kind == "sparse_tensor_type":
        return "sparse<%s>" % elem_name(t.sparse_tensor_type.elem_type)
    return "undefined"


def shape_of(t):
    kind = t.WhichOneof("value")
    holder = None
    if kind == "tensor_type":
        holder = t.tensor_type
    elif kind == "sparse_tensor_type":
        holder = t.sparse_tensor_type
    if holder is None or not holder.HasField("shape"):
        return None
    dims = []
    for d in holder.shape.dim:
        which = d.WhichOneof("value")
        dims.append(d.dim_value if which == "dim_value" else d.dim_param if which == "dim_param" else None)
    return dims


def expected_info(model):
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [{"name": v.name, "dtype": type_name(v.type), "shape": shape_of(v.type)}
              for v in graph.input if v.name not in initializers]
    outputs = [{"name": v.name, "dtype": type_name(v.type), "shape": shape_of(v.type)}
               for v in graph.output]
    axes = []
    for value in inputs + outputs:
        for axis, dim in enumerate(value["shape"] or []):
            if not isinstance(dim, int):
                axes.append({"tensor": value["name"], "axis": axis, "symbol": dim})
    return {
        "ir_version": model.ir_version,
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "opset_import": [{"domain": o.domain, "version": o.version} for o in model.opset_import],
        "inputs": inputs,
        "outputs": outputs,
        "dynamic_axes": axes,
        "node_count": len(graph.node),
        "initializer_count": len(graph.initializer),
    }


def actual_info(cli, path):
    run = subprocess.run([cli, "info", "--json", path], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("exit %d: %s" % (run.returncode, run.stderr.strip()))
    info = json.loads(run.stdout)
    info["initializer_count"] = info["initializers"]["count"]
    return info


def find_models(folders):
    for folder in folders:
        for root, _dirs, files in os.walk(folder):
            if "model.onnx" in files:
                yield os.path.join(root, "model.onnx")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args()
    models = sorted(find_models(args.folders))[:: max(1, args.every)]
    failures = 0
    for path in models:
        expected = expected_info(onnx.load(path))
        try:
            actual = actual_info(args.cli, path)
        except Exception as error:  # noqa: BLE001 - reported per model
            print("FAIL %s: %s" % (path, error))
            failures += 1
            continue
        diffs = [key for key in expected if actual.get(key) != expected[key]]
        if diffs:
            failures += 1
            print("FAIL %s" % path)
            for key in diffs:
                print("  %s: onnx %s, onnxlens %s" % (key, json.dumps(expected[key]), json.dumps(actual.get(key))))
    print("%d models, %d agree, %d differ" % (len(models), len(models) - failures, failures))
    if not models:
        print("no models found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
