#!/usr/bin/python3
"""Makes a tiny export folder whose outputs are ~1e-9 (as a MobileNetV2 export with random weights
gives): model.onnx (x [batch, 16] @ W [16, 4], W ~ 1e-9), test_data_set_0 (batch 1) and
test_data_set_1 (batch 2) with the outputs numpy computes, and an export.json. Any engine output
of magnitude < 1e-4 passes an absolute threshold of 1e-4, so the report must warn.
Run with /usr/bin/python3 (python3-onnx, numpy)."""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)
weights = (rng.standard_normal((16, 4)) * 1e-9).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="/classifier/MatMul")], "near_zero",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
    [numpy_helper.from_array(weights, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "model.onnx"))
for k, batch in enumerate((1, 2)):
    folder = os.path.join(HERE, "test_data_set_%d" % k)
    os.makedirs(folder, exist_ok=True)
    x = rng.standard_normal((batch, 16)).astype(np.float32)
    y = x.astype(np.float64) @ weights.astype(np.float64)
    with open(os.path.join(folder, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())
with open(os.path.join(HERE, "export.json"), "w") as f:
    json.dump({"source": {"kind": "script", "name": "near_zero.py"}, "opset": 13, "dynamic_batch": True,
               "pytorch_latency": {"runs": 3, "warmup": 1, "median_ms": 0.01, "min_ms": 0.01}}, f, indent=2)
