#!/usr/bin/python3
"""Writes the hostile-input corpus that tests/app/HostileInputsTest.cpp feeds to onnxlens-cli.

Run with /usr/bin/python3 (it has onnx and numpy). The generated files are committed, so the
tests need no generation step; rerun this script only to change the corpus. Output is
deterministic (fixed seeds, fixed producer fields).
"""
import os
import shutil
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 13)]


def model(nodes, inputs, outputs, initializers=(), name="hostile"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=OPSET, producer_name="make_hostile.py")
    m.ir_version = 8
    return m


def save(m, *path):
    full = os.path.join(HERE, *path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(m.SerializeToString())
    return full


def write_bytes(data, *path):
    full = os.path.join(HERE, *path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)


def float_input(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [float_input("x", [1, 3])], [float_input("y", [1, 3])])


def external_weight_model(location, offset=None, length=None):
    """Add(x, w) where w (4 floats) lives in external data at `location`."""
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.append(4)
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = w.external_data.add()
            entry.key = key
            entry.value = str(value)
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [float_input("x", [4])], [float_input("y", [4])], [w])


def nested_if_model(depth):
    """`depth` If nodes, each holding the next in its then branch."""
    def branch(level, tag):
        out = f"out_{level}_{tag}"
        if level == depth or tag == "else":
            node = helper.make_node("Identity", ["x"], [out], name=f"id_{level}_{tag}")
        else:
            inner = nested_if(level + 1)
            node = helper.make_node("If", ["cond"], [out], name=f"if_{level}_{tag}",
                                    then_branch=inner[0], else_branch=inner[1])
        return helper.make_graph([node], f"g_{level}_{tag}", [], [float_input(out, [1])])

    def nested_if(level):
        return branch(level, "then"), branch(level, "else")

    then_branch, else_branch = nested_if(1)
    top = helper.make_node("If", ["cond"], ["y"], name="if_0",
                           then_branch=then_branch, else_branch=else_branch)
    return model([top], [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                         float_input("x", [1])], [float_input("y", [1])])


def main():
    rng = np.random.default_rng(20261122)

    # Byte-level garbage.
    write_bytes(b"", "empty.onnx")
    write_bytes(rng.integers(0, 256, 512, dtype=np.uint8).tobytes(), "random_bytes.onnx")
    weights = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
    full = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
                 [float_input("x", [1, 16])], [float_input("y", [1, 16])], [weights])
    data = full.SerializeToString()
    write_bytes(data[: len(data) // 2], "truncated.onnx")
    os.makedirs(os.path.join(HERE, "folder.onnx"), exist_ok=True)
    write_bytes(b"", "folder.onnx", ".keep")

    # Broken graphs.
    save(model([helper.make_node("Add", ["x", "b"], ["a"], name="add"),
                helper.make_node("Relu", ["a"], ["b"], name="relu")],
               [float_input("x", [1])], [float_input("b", [1])]), "cyclic_graph.onnx")
    save(model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")],
               [float_input("x", [1])], [float_input("y", [1])]), "undefined_input.onnx")
    negative = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    negative.dims[0] = -2
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [float_input("x", [2])], [float_input("y", [2])], [negative]),
         "negative_dims_initializer.onnx")

    # Shapes too large to allocate (2^40 elements) or to count in 64 bits (2^96).
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="huge_fill")],
               [], [float_input("y", None)],
               [numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")]),
         "huge_constant_of_shape.onnx")
    save(model([helper.make_node("Expand", ["x", "shape"], ["y"], name="huge_expand")],
               [float_input("x", [1])], [float_input("y", None)],
               [numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")]),
         "huge_expand.onnx")
    save(model([helper.make_node("Expand", ["x", "shape"], ["y"], name="overflow_expand")],
               [float_input("x", [1])], [float_input("y", None)],
               [numpy_helper.from_array(np.array([1 << 32, 1 << 32, 1 << 32], np.int64),
                                        "shape")]),
         "overflow_expand.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [float_input("x", ["N", 1024])], [float_input("y", ["N", 1024])]),
         "dynamic_batch.onnx")

    # External data that leaves the model's folder or the data file.
    write_bytes(np.arange(4, dtype=np.float32).tobytes(), "external", "outside.bin")
    write_bytes(np.arange(4, dtype=np.float32).tobytes(), "external", "model", "weights.bin")
    save(external_weight_model("../outside.bin"), "external", "model", "dotdot.onnx")
    save(external_weight_model("/etc/passwd"), "external", "model",
         "absolute.onnx")
    link = os.path.join(HERE, "external", "model", "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../outside.bin", link)
    save(external_weight_model("link.bin"), "external", "model", "symlink.onnx")
    save(external_weight_model("weights.bin", offset=4096), "external", "model",
         "offset_past_end.onnx")
    save(external_weight_model("weights.bin", offset=8, length=16), "external", "model",
         "length_past_end.onnx")
    save(external_weight_model("weights.bin"), "external", "model", "valid.onnx")

    # Nesting: deeper than the loader's limit (64) but within protobuf's recursion limit, and
    # deeper than any recursion limit.
    save(nested_if_model(70), "nested_70.onnx")
    save(nested_if_model(400), "nested_400.onnx")

    # A Scan without its required num_scan_inputs: onnx 1.12's shape inference dereferences the
    # missing attribute (found by fuzz_model_load), so info must skip inference, not crash.
    scan = onnx.load("/usr/share/libonnx-testdata/data/node/test_scan9_sum/model.onnx")
    attributes = [a for a in scan.graph.node[0].attribute if a.name != "num_scan_inputs"]
    del scan.graph.node[0].attribute[:]
    scan.graph.node[0].attribute.extend(attributes)
    save(scan, "scan_without_num_scan_inputs.onnx")

    # A test data set whose input disagrees with the graph (int64 [2, 2] for float [1, 3]).
    case = os.path.join(HERE, "mismatched_data")
    shutil.rmtree(case, ignore_errors=True)
    save(relu_model(), "mismatched_data", "model.onnx")
    bad_input = numpy_helper.from_array(np.arange(4, dtype=np.int64).reshape(2, 2), "x")
    write_bytes(bad_input.SerializeToString(), "mismatched_data", "test_data_set_0", "input_0.pb")
    expected = numpy_helper.from_array(np.zeros((1, 3), np.float32), "y")
    write_bytes(expected.SerializeToString(), "mismatched_data", "test_data_set_0", "output_0.pb")

    # Tensor files: a .npy whose header promises 1000 floats but holds 2, a truncated .pb.
    save(relu_model(), "relu.onnx")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1000), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
                np.zeros(2, np.float32).tobytes(), "lying_header.npy")
    good = numpy_helper.from_array(np.ones((1, 3), np.float32), "x").SerializeToString()
    write_bytes(good[:-5], "truncated_tensor.pb")
    # 40 bytes whose dims claim 2^31 strings (found by fuzz_tensor_file: the engine allocated
    # 2.3 GB before noticing the data was missing).
    claim = TensorProto()
    claim.name = "x"
    claim.data_type = TensorProto.STRING
    claim.dims.extend([1 << 16, 1 << 15])
    claim.string_data.extend([b"tuesday", b"thursday"])
    write_bytes(claim.SerializeToString(), "huge_dims_tensor.pb")

    # 2^40-element shapes declared by the file itself: an initializer whose dims claim 4 TiB of
    # floats but whose raw_data holds one, and a graph input of 2^40 floats.
    huge_weight = TensorProto()
    huge_weight.name = "w"
    huge_weight.data_type = TensorProto.FLOAT
    huge_weight.dims.extend([1 << 20, 1 << 20])
    huge_weight.raw_data = np.ones(1, np.float32).tobytes()
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [float_input("x", [1])], [float_input("y", None)], [huge_weight]),
         "huge_initializer.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [float_input("x", [1 << 20, 1 << 20])], [float_input("y", [1 << 20, 1 << 20])]),
         "huge_input.onnx")

    # Attribute values that break arithmetic (issue 19): onnx 1.12's own shape inference divides
    # by a zero stride and reads past the dims of a rank-0 LSTM input; the kernels would too.
    conv_w = numpy_helper.from_array(rng.standard_normal((2, 3, 3, 3)).astype(np.float32), "w")
    save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="zero_stride_conv",
                                 strides=[0, 0])],
               [float_input("x", [1, 3, 8, 8])], [float_input("y", [1, 2, "H", "W"])], [conv_w]),
         "conv_zero_strides.onnx")
    save(model([helper.make_node("DepthToSpace", ["x"], ["y"], name="huge_block",
                                 blocksize=1 << 40)],
               [float_input("x", [1, 4, 2, 2])], [float_input("y", [1, "C", "H", "W"])]),
         "depth_to_space_huge_blocksize.onnx")
    lstm_w = numpy_helper.from_array(np.zeros((1, 8, 3), np.float32), "W")
    lstm_r = numpy_helper.from_array(np.zeros((1, 8, 2), np.float32), "R")
    save(model([helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="rank0_lstm",
                                 hidden_size=2)],
               [float_input("x", [])], [float_input("y", ["T", 1, 1, 2])], [lstm_w, lstm_r]),
         "lstm_rank0_input.onnx")
    # Dims that need 4x the data the initializer holds: `check` must catch what `run` will.
    short = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    short.dims[0] = 8
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [float_input("x", [8])], [float_input("y", [8])], [short]),
         "short_data_initializer.onnx")


if __name__ == "__main__":
    main()
