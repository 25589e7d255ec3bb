#!/usr/bin/python3
"""The exporter's module map (resources/exporter/onnxlens_export.py: node_scope,
map_module_outputs, record_modules) checked from the outside (ctest app.exporter_module_map).

  - node_scope and map_module_outputs on hand-written node lists: torch's two ways of naming a
    scope component (attribute name, or a called Sequential's component and the index), 'layers.1' not
    taking 'layers.10''s nodes, the last value read outside the scope, graph outputs, tuples
    matched by shape (ambiguous ones left unmapped), modules without nodes;
  - record_modules on a PyTorch model with scopes (nested Sequential, a BatchNorm the exporter
    folds into the Conv before it, a ModuleList of 12 blocks, a module called twice, a Dropout, an
    LSTM returning a tuple, residual blocks with a Sequential branch, in-place add and ReLU): every
    mapped ONNX value, made a graph output and run by `onnxlens-cli run`, equals the tensor
    PyTorch's module returned.

usage: exporter_module_map_check.py --cli ONNXLENS_CLI --exporter onnxlens_export.py
Exits 77 (skipped) when numpy, onnx or torch is missing.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
except ImportError:
    print("numpy and onnx are needed; skipped")
    sys.exit(77)


def load_exporter(path):
    spec = importlib.util.spec_from_file_location("onnxlens_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_pure_functions(ex):
    assert ex.node_scope("/features/features.0/Conv") == "features.0"
    assert ex.node_scope("/features/features.1/features.1.0/Conv") == "features.1.0"
    assert ex.node_scope("/layer2/layer2.0/downsample/downsample.0/Conv") == "layer2.0.downsample.0"
    assert ex.node_scope("/encoder/layer.0/attention/self/MatMul") == "encoder.layer.0.attention.self"
    assert ex.node_scope("/layers.0/lin/Gemm") == "layers.0.lin"
    assert ex.node_scope("/layers.10/lin/Gemm") == "layers.10.lin"
    assert ex.node_scope("/layer2/layer2.0/relu_1/Relu") == "layer2.0.relu_1"  # a second call
    assert ex.node_scope("/Softmax") == ""
    assert ex.node_scope("Constant_16") is None

    nodes = [
        ("/layers.1/lin/Gemm", ["x", "w"], ["a"]),
        ("/layers.1/Relu", ["a"], ["b"]),
        ("/layers.1/Add", ["b", "x"], ["c"]),
        ("/layers.10/lin/Gemm", ["c", "w"], ["d"]),
        ("/layers.10/Add", ["d", "c"], ["e"]),
        ("/lstm/LSTM", ["e"], ["y", "y_h", "y_c"]),
        ("/lstm/Squeeze", ["y"], ["f"]),
        ("/Softmax", ["f", "y_h"], ["out"]),
    ]
    shapes = {"a": [2, 4], "b": [2, 4], "c": [2, 4], "d": [2, 4], "e": [2, 4], "y": [3, 1, 2, 5],
              "y_h": [1, 2, 5], "y_c": [1, 2, 5], "f": [3, 2, 5], "out": [3, 2, 5]}
    recorded = {"layers.1": [[2, 4]], "layers.1.lin": [[2, 4]], "layers.10": [[2, 4]],
                "layers.10.lin": [[2, 4]], "lstm": [[3, 2, 5], [1, 2, 5], [1, 2, 5]],
                "layers.0": [[2, 4]], "dropout": [[2, 4]]}
    m = ex.map_module_outputs(nodes, ["out"], recorded, shapes)
    # The last value read outside the scope: layers.1's Add, not its Gemm (read inside it).
    assert m["layers.1"] == ([("c", "/layers.1/Add")], None), m["layers.1"]
    assert m["layers.1.lin"] == ([("a", "/layers.1/lin/Gemm")], None), m["layers.1.lin"]
    # layers.1 is a prefix of layers.10 as text, not as a scope.
    assert m["layers.10"] == ([("e", "/layers.10/Add")], None), m["layers.10"]
    assert m["layers.10.lin"] == ([("d", "/layers.10/lin/Gemm")], None), m["layers.10.lin"]
    # The LSTM: its sequence output maps; two state tensors of one shape and only y_h read
    # outside: ambiguous, both unmapped (y_c is not read at all).
    chosen, problem = m["lstm"]
    assert chosen[0] == ("f", "/lstm/Squeeze") and chosen[1] is None and chosen[2] is None, chosen
    assert problem and "2 of its 3" in problem, problem
    assert m["layers.0"][0] == [None] and "no ONNX node" in m["layers.0"][1]
    assert m["dropout"][0] == [None]
    # Both states read outside: in order.
    nodes2 = nodes[:-1] + [("/Softmax", ["f", "y_h", "y_c"], ["out"])]
    chosen, problem = ex.map_module_outputs(nodes2, ["out"], {"lstm": recorded["lstm"]}, shapes)["lstm"]
    assert chosen == [("f", "/lstm/Squeeze"), ("y_h", "/lstm/LSTM"), ("y_c", "/lstm/LSTM")], chosen
    assert problem is None
    # A graph output counts as read outside; without shapes the last escaping value is taken.
    m = ex.map_module_outputs([("/head/Gemm", ["x"], ["logits"])], ["logits"], {"head": [[1, 3]]})
    assert m["head"] == ([("logits", "/head/Gemm")], None), m["head"]
    # A shape inference says differs: not mapped.
    m = ex.map_module_outputs([("/head/Gemm", ["x"], ["logits"])], ["logits"], {"head": [[1, 3]]},
                              {"logits": [1, 4]})
    assert m["head"][0] == [None], m["head"]
    # A symbolic dim matches any size.
    m = ex.map_module_outputs([("/head/Gemm", ["x"], ["logits"])], ["logits"], {"head": [[7, 3]]},
                              {"logits": [None, 3]})
    assert m["head"][0] == [("logits", "/head/Gemm")], m["head"]
    print("node_scope and map_module_outputs: ok")


def check_recorded_model(ex, cli):
    try:
        import torch
        import torch.nn as nn
    except ImportError:
        print("torch is missing; the recording check skipped")
        return False

    class Block(nn.Module):  # a torchvision-style residual block: in-place add and ReLU
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.act = nn.GELU()
            self.down = nn.Sequential(nn.Linear(6, 6), nn.Tanh())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.act(self.lin(x))
            out += self.down(x)
            return self.relu(out)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv1d(3, 6, 1), nn.BatchNorm1d(6), nn.ReLU(),
                                      nn.Sequential(nn.Linear(4, 6)))
            self.layers = nn.ModuleList([Block() for _ in range(12)])
            self.shared = nn.Linear(6, 6)
            self.drop = nn.Dropout(0.1)
            self.lstm = nn.LSTM(6, 5, batch_first=True)

        def forward(self, x):
            x = self.stem(x)
            for layer in self.layers:
                x = layer(x)
            x = self.shared(self.shared(x))
            y, (h, c) = self.lstm(self.drop(x))
            return y.softmax(-1), h

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():  # a BatchNorm that changes values (the exporter folds it into the Conv)
        bn = net.stem[1]
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
    inputs = (torch.randn(2, 3, 4),)
    with tempfile.TemporaryDirectory() as folder:
        model_path = os.path.join(folder, "model.onnx")
        torch.onnx.export(net, inputs, model_path, opset_version=17, input_names=["x"],
                          output_names=["probabilities", "state"])
        mapped = ex.record_modules(torch, net, inputs, folder)
        with open(os.path.join(folder, "modules", "index.json")) as f:
            index = json.load(f)
        entries = {e["module"]: e for e in index["modules"]}
        assert "called 2 times" in entries["shared"]["problem"], entries["shared"]
        assert "no ONNX node" in entries["drop"]["problem"], entries["drop"]
        assert entries["layers.10"]["outputs"][0]["onnx_value"].startswith("/layers.10/"), entries["layers.10"]
        assert entries["layers.1"]["outputs"][0]["onnx_value"].startswith("/layers.1/"), entries["layers.1"]
        assert entries["stem.3.0"]["outputs"][0]["onnx_node"] == "/stem/stem.3/stem.3.0/Add", entries["stem.3.0"]
        # The BatchNorm folded into the Conv: the Conv's value is the BatchNorm's output.
        assert entries["stem.1"]["outputs"][0]["onnx_node"] == "/stem/stem.0/Conv", entries["stem.1"]
        assert "folded stem.1 (BatchNorm1d)" in entries["stem.0"]["problem"], entries["stem.0"]
        assert entries["layers.3.act"]["outputs"][0]["onnx_value"].startswith("/layers.3/act/"), entries["layers.3.act"]
        # A called Sequential's children: /layers.3/down/down.0/...
        assert entries["layers.3.down.0"]["outputs"][0]["onnx_node"].startswith("/layers.3/down/down.0/"), \
            entries["layers.3.down.0"]
        lstm = entries["lstm"]["outputs"]
        assert len(lstm) == 3 and "onnx_value" in lstm[0], lstm

        pairs = [(o["onnx_value"], o["file"]) for e in index["modules"] for o in e["outputs"] if "onnx_value" in o]
        assert len(pairs) == mapped and mapped >= 40, (len(pairs), mapped)
        model = onnx.load(model_path)
        present = {o.name for o in model.graph.output}
        values = []
        for value, _ in pairs:
            if value not in present and value not in values:
                values.append(value)
                model.graph.output.append(onnx.ValueInfoProto(name=value))
        probe = os.path.join(folder, "probe.onnx")
        onnx.save(model, probe)
        np.save(os.path.join(folder, "x.npy"), inputs[0].numpy())
        out = os.path.join(folder, "out")
        proc = subprocess.run([cli, "run", probe, "--input", "x=" + os.path.join(folder, "x.npy"), "--out", out],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        order = [o.name for o in model.graph.output]
        worst = 0.0
        for value, file in pairs:
            engine = np.load(os.path.join(out, "output_%d.npy" % order.index(value)))
            torch_value = np.load(os.path.join(folder, "modules", file))
            assert engine.shape == torch_value.shape, (value, engine.shape, torch_value.shape)
            worst = max(worst, float(np.max(np.abs(engine - torch_value))))
        assert worst < 1e-4, worst
        print("record_modules: %d module outputs mapped, each equal to its ONNX value (max abs %.2g)"
              % (mapped, worst))
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--exporter", required=True)
    args = parser.parse_args()
    ex = load_exporter(args.exporter)
    check_pure_functions(ex)
    if not check_recorded_model(ex, args.cli):
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
