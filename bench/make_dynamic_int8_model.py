#!/usr/bin/python3
"""Quantizes the MatMuls of a float ONNX model the way ONNX Runtime's quantize_dynamic writes them.

usage: make_dynamic_int8_model.py IN.onnx OUT.onnx

Every MatMul whose second input is a 2-D float initializer W becomes
    DynamicQuantizeLinear(x) -> (x_q, x_scale, x_zero_point)      (one per x, shared)
    MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) -> Cast(to float)
    Mul(x_scale, W_scale) -> scale;  Mul(cast, scale) -> the MatMul's output
with W_q int8, symmetric per tensor: W_scale = max|W| / 127, W_zero_point = 0 (the defaults of
quantize_dynamic: weight type QInt8, per_channel off). Everything else stays float. This is the
layout issue 17 measures; the engine's own quantizer (`onnxlens-cli quantize`) replaces this
script for the benchmark once it exists.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize(model):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    nodes, added = [], []
    quantized_inputs = {}
    count = 0
    for node in graph.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT:
            nodes.append(node)
            continue
        count += 1
        x = node.input[0]
        if x not in quantized_inputs:
            names = (x + "_quantized", x + "_scale", x + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(names), name=x + "_QuantizeLinear"))
            quantized_inputs[x] = names
        xq, xs, xzp = quantized_inputs[x]
        values = numpy_helper.to_array(w).astype(np.float32)
        scale = np.float32(max(float(np.abs(values).max()), 1e-12) / 127.0)
        wq = np.clip(np.rint(values / scale), -127, 127).astype(np.int8)
        wname = w.name + "_quantized"
        added += [numpy_helper.from_array(wq, wname),
                  numpy_helper.from_array(np.array(scale, dtype=np.float32), w.name + "_scale"),
                  numpy_helper.from_array(np.array(0, dtype=np.int8), w.name + "_zero_point")]
        out = node.output[0]
        base = node.name or out
        nodes += [
            helper.make_node("MatMulInteger", [xq, wname, xzp, w.name + "_zero_point"],
                             [out + "_output_quantized"], name=base + "_quant"),
            helper.make_node("Mul", [xs, w.name + "_scale"], [out + "_scales_mul"], name=base + "_scales_mul"),
            helper.make_node("Cast", [out + "_output_quantized"], [out + "_output_quantized_cast"],
                             to=TensorProto.FLOAT, name=base + "_output_quantized_cast"),
            helper.make_node("Mul", [out + "_output_quantized_cast", out + "_scales_mul"], [out],
                             name=base + "_output_quantized_mul"),
        ]
    used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    del graph.node[:]
    graph.node.extend(nodes)
    return count


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    model = onnx.load(argv[1])
    count = quantize(model)
    onnx.checker.check_model(model)
    onnx.save(model, argv[2])
    print("%d MatMul nodes quantized" % count, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
