#!/usr/bin/python3
"""numpy's side of the .npy interop test (TensorFileTest.NpyInteropWithNumpy).

make DIR:   writes CASE.npy with numpy (every dtype, big-endian, Fortran order, scalars) and
            CASE.pb, the same values as a TensorProto (onnx.numpy_helper, C order, little-endian).
verify DIR: for each DIR/ours/CASE.npy written by onnxlens from CASE.pb, numpy.load must give
            exactly the values of CASE.pb.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper


def cases():
    rng = np.random.default_rng(3)
    values = rng.standard_normal((2, 3, 4))
    out = {}
    for dtype in ["float32", "float64", "float16", "int8", "int16", "int32", "int64",
                  "uint8", "uint16", "uint32", "uint64", "complex64", "complex128"]:
        if dtype.startswith("complex"):
            array = (values * 100 + 1j * values).astype(dtype)
        else:
            array = (values * 100).astype(dtype)
        out[dtype] = array
        out[dtype + "_big_endian"] = array.astype(np.dtype(dtype).newbyteorder(">"))
        out[dtype + "_fortran"] = np.asfortranarray(array)
    out["bool"] = values > 0
    out["bool_fortran"] = np.asfortranarray(values > 0)
    out["scalar"] = np.array(3.5, dtype="float32")
    out["vector"] = np.arange(7, dtype="int64")
    out["empty"] = np.zeros((0, 4), dtype="float32")
    return out


def make(folder):
    os.makedirs(folder, exist_ok=True)
    for name, array in cases().items():
        np.save(os.path.join(folder, name + ".npy"), array)
        reference = array.astype(array.dtype.newbyteorder("<"), order="C")  # keeps 0-d arrays 0-d
        tensor = onnx.numpy_helper.from_array(reference, name)
        with open(os.path.join(folder, name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    return 0


def verify(folder):
    failures = 0
    ours = os.path.join(folder, "ours")
    for name in sorted(os.listdir(ours)):
        loaded = np.load(os.path.join(ours, name))
        tensor = onnx.TensorProto()
        with open(os.path.join(folder, name[:-4] + ".pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        expected = onnx.numpy_helper.to_array(tensor)
        if loaded.dtype != expected.dtype or loaded.shape != expected.shape or \
                not np.array_equal(loaded, expected):
            print("MISMATCH %s: numpy read %s %s" % (name, loaded.dtype, loaded.shape))
            failures += 1
    print("%d files checked, %d mismatches" % (len(os.listdir(ours)), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    mode, folder = sys.argv[1], sys.argv[2]
    sys.exit(make(folder) if mode == "make" else verify(folder))
