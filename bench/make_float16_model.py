#!/usr/bin/python3
"""Converts a float32 ONNX model to float16 weights and activations (issue 17's float16 variants).

usage: make_float16_model.py IN.onnx OUT.onnx

Every float initializer, Constant / ConstantOfShape value, graph input, graph output and
value_info of element type float becomes float16, and Cast to float becomes Cast to float16, so
that the whole graph computes in float16 as published float16 models do. Only the top-level graph
is converted (the benchmark models have no subgraphs).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def half_tensor(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    converted = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    return converted


def half_type(type_proto):
    if type_proto.HasField("tensor_type") and type_proto.tensor_type.elem_type == TensorProto.FLOAT:
        type_proto.tensor_type.elem_type = TensorProto.FLOAT16


def convert(model):
    graph = model.graph
    for i, init in enumerate(graph.initializer):
        graph.initializer[i].CopyFrom(half_tensor(init))
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        half_type(value.type)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                attr.t.CopyFrom(half_tensor(attr.t))
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.FLOAT16
            if attr.name == "dtype" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.FLOAT16
    return model


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    model = convert(onnx.load(argv[1]))
    onnx.checker.check_model(model)
    onnx.save(model, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
