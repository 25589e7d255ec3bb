#!/usr/bin/env python3
"""Models of ai.onnx opsets 18 to 24, written with onnx.helper (python3-onnx 1.12 writes any
opset number; it cannot check them), driven through onnxlens-cli as a user would:

- `check` passes valid ones (exit 0) and says which nodes onnxlens checked instead of the onnx
  checker; it fails broken ones (wrong input count, missing attribute, wrong attribute type);
- `info --json` shows shapes on every edge (onnx's inference below opset 18, onnxlens's rules
  beyond);
- `compare` matches expected outputs computed here with numpy, independently of the engine;
- run/compare/bench refuse an opset newer than the build knows unless --allow-newer-opset.

Usage: newer_opset_models.py ONNXLENS_CLI [--keep DIR] [-k NAME]
Exit 77 (skipped) when python3-onnx or numpy is missing."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print("skipping: %s" % e)
    sys.exit(77)

CLI = None
FAILURES = []


def run_cli(*args):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expect(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAIL: " + what)


NP_TO_ONNX = {
    np.dtype("float32"): TensorProto.FLOAT,
    np.dtype("float64"): TensorProto.DOUBLE,
    np.dtype("int64"): TensorProto.INT64,
    np.dtype("int32"): TensorProto.INT32,
    np.dtype("int8"): TensorProto.INT8,
    np.dtype("uint8"): TensorProto.UINT8,
    np.dtype("int16"): TensorProto.INT16,
    np.dtype("uint16"): TensorProto.UINT16,
    np.dtype("bool"): TensorProto.BOOL,
}


def value_info(name, array, symbolic=None):
    if symbolic == "batch":
        symbolic = {0: "batch"}
    shape = list(array.shape)
    if symbolic:
        for axis, sym in symbolic.items():
            shape[axis] = sym
    return helper.make_tensor_value_info(name, NP_TO_ONNX[array.dtype], shape)


def make_model(nodes, inputs, outputs, opset, initializers=(), ir_version=8, symbolic=None,
               output_shapes=True):
    """inputs/outputs: list of (name, numpy array); initializers: list of (name, array)."""
    graph = helper.make_graph(
        nodes,
        "g",
        [value_info(n, a, (symbolic or {}).get(n)) for n, a in inputs],
        [value_info(n, a, (symbolic or {}).get(n)) if output_shapes else
         helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], None) for n, a in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def write_case(root, name, model, inputs, outputs):
    folder = os.path.join(root, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(data, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(data, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    # The same data as JSON, for bench/ort_newer_opsets.mjs (ONNX Runtime cross-check).
    def plain(pairs):
        # NaN and +-inf as the strings JavaScript's Number() reads ("NaN", "Infinity").
        def number(v):
            return v if np.isfinite(v) else ("NaN" if np.isnan(v) else
                                             ("Infinity" if v > 0 else "-Infinity"))
        return [{"name": n, "dtype": str(a.dtype), "shape": list(a.shape),
                 "data": [number(v) for v in a.astype(np.float64).reshape(-1).tolist()]
                 if a.dtype != bool else a.reshape(-1).astype(int).tolist()} for n, a in pairs]
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump({"inputs": plain(inputs), "outputs": plain(outputs)}, f)
    return path


# ---------------------------------------------------------------- cases
# Each case: name -> function returning (model, inputs, outputs, options) with outputs computed by
# numpy. options: {"run": False} for operators the engine does not run (check/info only),
# "rtol"/"atol" for compare.
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


rng = np.random.default_rng(18)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@case
def reduce_mean_18_axes_input():
    x = f32(2, 3, 4)
    axes = np.array([1, -1], dtype=np.int64)
    y = x.mean(axis=(1, 2), keepdims=True)
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)
    m = make_model([node], [("x", x)], [("y", y)], 18, initializers=[("axes", axes)])
    return m, [("x", x)], [("y", y)], {}


@case
def reduce_ops_18_axes_input():
    x = np.abs(f32(2, 3, 4)) + 0.5
    axes = np.array([0, 2], dtype=np.int64)
    expected = {
        "ReduceL1": np.abs(x).sum(axis=(0, 2)),
        "ReduceL2": np.sqrt((x * x).sum(axis=(0, 2))),
        "ReduceLogSum": np.log(x.sum(axis=(0, 2))),
        "ReduceLogSumExp": np.log(np.exp(x).sum(axis=(0, 2))),
        "ReduceMax": x.max(axis=(0, 2)),
        "ReduceMin": x.min(axis=(0, 2)),
        "ReduceProd": x.prod(axis=(0, 2)),
        "ReduceSumSquare": (x * x).sum(axis=(0, 2)),
        "ReduceMean": x.mean(axis=(0, 2)),
    }
    nodes, outputs = [], []
    for op, y in expected.items():
        nodes.append(helper.make_node(op, ["x", "axes"], [op], keepdims=0))
        outputs.append((op, y.astype(np.float32)))
    # noop_with_empty_axes with no axes: the identity.
    nodes.append(helper.make_node("ReduceSum", ["x", ""], ["noop"], noop_with_empty_axes=1))
    outputs.append(("noop", x))
    m = make_model(nodes, [("x", x)], outputs, 18, initializers=[("axes", axes)])
    return m, [("x", x)], outputs, {"rtol": 1e-4}


@case
def split_18_num_outputs_uneven():
    x = f32(2, 7)
    parts = [x[:, 0:3], x[:, 3:6], x[:, 6:7]]
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)
    outs = [("a", parts[0]), ("b", parts[1]), ("c", parts[2])]
    m = make_model([node], [("x", x)], outs, 18)
    return m, [("x", x)], outs, {}


@case
def pad_18_axes():
    x = f32(2, 3, 4)
    pads = np.array([1, 0, 2, 1], dtype=np.int64)  # axes (0, 2): begins then ends
    axes = np.array([0, 2], dtype=np.int64)
    value = np.array(1.5, dtype=np.float32)
    y = np.pad(x, [(1, 2), (0, 0), (0, 1)], mode="constant", constant_values=1.5)
    node = helper.make_node("Pad", ["x", "pads", "value", "axes"], ["y"], mode="constant")
    m = make_model([node], [("x", x)], [("y", y)], 18,
                   initializers=[("pads", pads), ("value", value), ("axes", axes)])
    return m, [("x", x)], [("y", y)], {}


@case
def scatter_elements_18_max():
    data = f32(3, 4)
    indices = np.array([[0, 1], [2, 2], [1, 0]], dtype=np.int64)
    updates = f32(3, 2)
    y = data.copy()
    for i in range(3):
        for j in range(2):
            y[i, indices[i, j]] = max(y[i, indices[i, j]], updates[i, j])
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1,
                            reduction="max")
    m = make_model([node], [("data", data)], [("y", y)], 18,
                   initializers=[("indices", indices), ("updates", updates)])
    return m, [("data", data)], [("y", y)], {}


@case
def gelu_20_tanh():
    x = f32(3, 5)
    y = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    node = helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")
    m = make_model([node], [("x", x)], [("y", y.astype(np.float32))], 20)
    return m, [("x", x)], [("y", y.astype(np.float32))], {"rtol": 1e-4, "atol": 1e-6}


@case
def average_pool_19_dilations():
    x = f32(1, 2, 6, 6)
    # kernel 2x2, dilation 2, stride 1: windows at (i, i+2).
    y = np.zeros((1, 2, 4, 4), dtype=np.float32)
    for i in range(4):
        for j in range(4):
            y[:, :, i, j] = (x[:, :, i, j] + x[:, :, i + 2, j] + x[:, :, i, j + 2] +
                             x[:, :, i + 2, j + 2]) / 4
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])
    m = make_model([node], [("x", x)], [("y", y)], 19)
    return m, [("x", x)], [("y", y)], {}


@case
def mish_18():
    x = (f32(4, 5) * 4).astype(np.float32)
    x[0, 0], x[0, 1] = 30.0, -30.0  # far tails: no overflow
    y = (x.astype(np.float64) * np.tanh(np.log1p(np.exp(x.astype(np.float64))))).astype(np.float32)
    node = helper.make_node("Mish", ["x"], ["y"])
    m = make_model([node], [("x", x)], [("y", y)], 18)
    return m, [("x", x)], [("y", y)], {"rtol": 1e-5, "atol": 1e-6}


@case
def bitwise_18():
    a = rng.integers(-1000, 1000, size=(3, 4)).astype(np.int32)
    b = rng.integers(-1000, 1000, size=(4,)).astype(np.int32)
    u = rng.integers(0, 255, size=(2, 3)).astype(np.uint8)
    v = rng.integers(0, 255, size=(2, 1)).astype(np.uint8)
    nodes = [
        helper.make_node("BitwiseAnd", ["a", "b"], ["and"]),
        helper.make_node("BitwiseOr", ["a", "b"], ["or"]),
        helper.make_node("BitwiseXor", ["u", "v"], ["xor"]),
        helper.make_node("BitwiseNot", ["u"], ["not_u"]),
        helper.make_node("BitwiseNot", ["a"], ["not_a"]),
    ]
    outs = [("and", np.bitwise_and(a, b)), ("or", np.bitwise_or(a, b)), ("xor", np.bitwise_xor(u, v)),
            ("not_u", np.invert(u)), ("not_a", np.invert(a))]
    ins = [("a", a), ("b", b), ("u", u), ("v", v)]
    return make_model(nodes, ins, outs, 18), ins, outs, {}


def group_norm_reference(x, groups, scale, bias, eps, per_channel):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    normalized = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    if per_channel:
        s, b = scale.reshape(shape), bias.reshape(shape)
    else:
        s = np.repeat(scale, c // groups).reshape(shape)
        b = np.repeat(bias, c // groups).reshape(shape)
    return (normalized * s + b).astype(np.float32)


@case
def group_normalization_18():
    x = f32(2, 6, 3, 4)
    scale, bias = f32(3), f32(3)
    y = group_norm_reference(x, 3, scale, bias, 1e-4, per_channel=False)
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=3,
                            epsilon=1e-4)
    m = make_model([node], [("x", x)], [("y", y)], 18,
                   initializers=[("scale", scale), ("bias", bias)])
    return m, [("x", x)], [("y", y)], {"rtol": 1e-4, "atol": 1e-5}


@case
def group_normalization_21():
    x = f32(2, 6, 5)
    scale, bias = f32(6), f32(6)
    y = group_norm_reference(x, 2, scale, bias, 1e-5, per_channel=True)
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2,
                            stash_type=1)
    m = make_model([node], [("x", x)], [("y", y)], 21,
                   initializers=[("scale", scale), ("bias", bias)])
    return m, [("x", x)], [("y", y)], {"rtol": 1e-4, "atol": 1e-5}


@case
def center_crop_pad_18():
    x = f32(5, 4, 3)
    shape = np.array([2, 7], dtype=np.int64)  # axis 0: crop 5 -> 2; axis 2: pad 3 -> 7
    y = np.zeros((2, 4, 7), dtype=np.float32)
    crop = (5 - 2) // 2  # 1
    pad = (7 - 3) // 2  # 2
    y[:, :, pad:pad + 3] = x[crop:crop + 2]
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, -1])
    m = make_model([node], [("x", x)], [("y", y)], 18, initializers=[("shape", shape)])
    return m, [("x", x)], [("y", y)], {}


def col2im_reference(cols, image, block, dilations, pads, strides):
    n, cb, L = cols.shape
    c = cb // int(np.prod(block))
    k = len(image)
    positions = [(image[i] + pads[i] + pads[i + k] - (dilations[i] * (block[i] - 1) + 1)) // strides[i] + 1
                 for i in range(k)]
    out = np.zeros((n, c) + tuple(image), dtype=np.float64)
    for ci in range(c):
        for kk, offs in enumerate(np.ndindex(*block)):
            row = cols[:, ci * int(np.prod(block)) + kk, :]
            for l, pos in enumerate(np.ndindex(*positions)):
                coord = [pos[i] * strides[i] - pads[i] + offs[i] * dilations[i] for i in range(k)]
                if all(0 <= coord[i] < image[i] for i in range(k)):
                    out[(slice(None), ci) + tuple(coord)] += row[:, l]
    return out.astype(np.float32)


@case
def col2im_18():
    image, block = [5, 6], [2, 3]
    dilations, pads, strides = [1, 2], [1, 0, 0, 1], [2, 1]
    positions = [(image[i] + pads[i] + pads[i + 2] - (dilations[i] * (block[i] - 1) + 1)) // strides[i] + 1
                 for i in range(2)]
    cols = f32(2, 2 * 6, positions[0] * positions[1])
    y = col2im_reference(cols, image, block, dilations, pads, strides)
    node = helper.make_node("Col2Im", ["cols", "image", "block"], ["y"], dilations=dilations,
                            pads=pads, strides=strides)
    m = make_model([node], [("cols", cols)], [("y", y)], 18,
                   initializers=[("image", np.array(image, np.int64)),
                                 ("block", np.array(block, np.int64))])
    return m, [("cols", cols)], [("y", y)], {"rtol": 1e-5, "atol": 1e-6}


def affine_grid_reference(theta, size, align_corners):
    spatial = size[2:]

    def base(length):
        if align_corners:
            return np.linspace(-1, 1, length) if length > 1 else np.zeros(1)
        return (2 * np.arange(length) + 1) / length - 1

    axes = [base(s) for s in spatial]  # outermost first
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]  # x (last axis) first
    homogeneous = np.stack(coords + [np.ones_like(coords[0])], axis=0)  # [dims+1, P]
    out = np.einsum("nij,jp->npi", theta.astype(np.float64), homogeneous)
    return out.reshape((size[0],) + tuple(spatial) + (len(spatial),)).astype(np.float32)


@case
def affine_grid_20():
    theta2 = f32(2, 2, 3)
    size2 = [2, 3, 4, 5]
    theta3 = f32(1, 3, 4)
    size3 = [1, 1, 2, 3, 4]
    nodes = [
        helper.make_node("AffineGrid", ["theta2", "size2"], ["grid2"], align_corners=0),
        helper.make_node("AffineGrid", ["theta2", "size2"], ["grid2a"], align_corners=1),
        helper.make_node("AffineGrid", ["theta3", "size3"], ["grid3"]),
    ]
    outs = [("grid2", affine_grid_reference(theta2, size2, False)),
            ("grid2a", affine_grid_reference(theta2, size2, True)),
            ("grid3", affine_grid_reference(theta3, size3, False))]
    ins = [("theta2", theta2), ("theta3", theta3)]
    m = make_model(nodes, ins, outs, 20, initializers=[("size2", np.array(size2, np.int64)),
                                                       ("size3", np.array(size3, np.int64))])
    return m, ins, outs, {"rtol": 1e-5, "atol": 1e-6}


def deform_conv_reference(x, w, offset, b, mask, strides, pads, dilations, group, offset_group):
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    oh = (h + pads[0] + pads[2] - (dilations[0] * (kh - 1) + 1)) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - (dilations[1] * (kw - 1) + 1)) // strides[1] + 1
    x = x.astype(np.float64)

    def sample(plane, yy, xx):
        if not (-1 < yy < h and -1 < xx < wd):
            return 0.0
        y0, x0 = int(np.floor(yy)), int(np.floor(xx))
        total = 0.0
        for dy in (0, 1):
            for dx in (0, 1):
                py, px = y0 + dy, x0 + dx
                if 0 <= py < h and 0 <= px < wd:
                    wy = (yy - y0) if dy else (1 - (yy - y0))
                    wx = (xx - x0) if dx else (1 - (xx - x0))
                    total += wy * wx * plane[py, px]
        return total

    y = np.zeros((n, oc, oh, ow))
    cpo = c // offset_group
    for bi in range(n):
        for o in range(oc):
            g = o // (oc // group)
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0 if b is None else float(b[o])
                    for icg in range(cg):
                        ic = g * cg + icg
                        og = ic // cpo
                        for ti in range(kh):
                            for tj in range(kw):
                                t = ti * kw + tj
                                dy = offset[bi, og * 2 * kh * kw + 2 * t, i, j]
                                dx = offset[bi, og * 2 * kh * kw + 2 * t + 1, i, j]
                                yy = i * strides[0] - pads[0] + ti * dilations[0] + dy
                                xx = j * strides[1] - pads[1] + tj * dilations[1] + dx
                                v = sample(x[bi, ic], yy, xx)
                                if mask is not None:
                                    v *= mask[bi, og * kh * kw + t, i, j]
                                acc += w[o, icg, ti, tj] * v
                    y[bi, o, i, j] = acc
    return y.astype(np.float32)


@case
def deform_conv_19():
    x = f32(1, 4, 5, 5)
    w = f32(2, 2, 3, 3)
    b = f32(2)
    strides, pads, dilations = [1, 2], [1, 1, 1, 0], [1, 1]
    oh = (5 + 2 - 3) // 1 + 1
    ow = (5 + 1 - 3) // 2 + 1
    offset = (f32(1, 2 * 2 * 9, oh, ow) * 0.7).astype(np.float32)
    mask = rng.uniform(0, 1, size=(1, 2 * 9, oh, ow)).astype(np.float32)
    y = deform_conv_reference(x, w, offset, b, mask, strides, pads, dilations, 2, 2)
    node = helper.make_node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"],
                            strides=strides, pads=pads, dilations=dilations, group=2,
                            offset_group=2, kernel_shape=[3, 3])
    ins = [("x", x), ("offset", offset), ("mask", mask)]
    m = make_model([node], ins, [("y", y)], 19, initializers=[("w", w), ("b", b)])
    return m, ins, [("y", y)], {"rtol": 1e-4, "atol": 1e-5}


@case
def quantize_dequantize_21_blockwise():
    x = (f32(2, 6, 3) * 3).astype(np.float32)
    block = 4  # axis 1: 6 -> 2 blocks, the last one short
    scale = rng.uniform(0.01, 0.1, size=(2, 2, 3)).astype(np.float32)
    zero = rng.integers(-10, 10, size=(2, 2, 3)).astype(np.int8)
    s_full = np.repeat(scale, block, axis=1)[:, :6]
    z_full = np.repeat(zero, block, axis=1)[:, :6].astype(np.float32)
    q = np.clip(np.rint(x / s_full) + z_full, -128, 127).astype(np.int8)
    dq = ((q.astype(np.float32) - z_full) * s_full).astype(np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1, block_size=block),
        helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["dq"], axis=1,
                         block_size=block),
    ]
    outs = [("q", q), ("dq", dq)]
    m = make_model(nodes, [("x", x)], outs, 21, initializers=[("scale", scale), ("zero", zero)])
    return m, [("x", x)], outs, {"rtol": 1e-5, "atol": 1e-6}


@case
def lp_pool_18_ceil_dilations():
    x = f32(1, 2, 8, 6)
    # kernel 2x2, dilation 2x1, stride 2, ceil_mode: rows ceil((8-3)/2)+1 = 4 (the last window
    # hangs over the end), cols (6-2)/2+1 = 3
    oh, ow = 4, 3
    y = np.zeros((1, 2, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            acc = np.zeros((1, 2))
            for ki in range(2):
                for kj in range(2):
                    r, c = i * 2 + ki * 2, j * 2 + kj
                    if r < 8 and c < 6:
                        acc += x[:, :, r, c].astype(np.float64) ** 2
            y[:, :, i, j] = np.sqrt(acc)
    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                            dilations=[2, 1], ceil_mode=1, p=2)
    y = y.astype(np.float32)
    m = make_model([node], [("x", x)], [("y", y)], 18)
    return m, [("x", x)], [("y", y)], {"rtol": 1e-5}


@case
def pad_19_wrap():
    x = f32(3, 4)
    pads = np.array([1, 2, 2, 1], dtype=np.int64)
    y = np.pad(x, [(1, 2), (2, 1)], mode="wrap")
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")
    m = make_model([node], [("x", x)], [("y", y)], 19, initializers=[("pads", pads)])
    return m, [("x", x)], [("y", y)], {}


@case
def scatter_nd_18_min():
    data = f32(4, 3)
    indices = np.array([[1], [3], [1]], dtype=np.int64)
    updates = f32(3, 3)
    y = data.copy()
    for k in range(3):
        y[indices[k, 0]] = np.minimum(y[indices[k, 0]], updates[k])
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="min")
    m = make_model([node], [("data", data)], [("y", y)], 18,
                   initializers=[("indices", indices), ("updates", updates)])
    return m, [("data", data)], [("y", y)], {}


@case
def reduce_max_20_bool():
    x = rng.integers(0, 2, size=(3, 4)).astype(bool)
    axes = np.array([1], dtype=np.int64)
    y = x.max(axis=1, keepdims=True)
    node = helper.make_node("ReduceMax", ["x", "axes"], ["y"])
    m = make_model([node], [("x", x)], [("y", y)], 20, initializers=[("axes", axes)])
    return m, [("x", x)], [("y", y)], {}


@case
def dft_20_axis_input():
    x = f32(2, 8, 1)
    axis = np.array(1, dtype=np.int64)
    spectrum = np.fft.fft(x[..., 0].astype(np.float64), axis=1)
    y = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)
    onesided = np.fft.rfft(x[..., 0].astype(np.float64), axis=1)
    y1 = np.stack([onesided.real, onesided.imag], axis=-1).astype(np.float32)
    nodes = [helper.make_node("DFT", ["x", "", "axis"], ["y"]),
             helper.make_node("DFT", ["x", "", "axis"], ["y1"], onesided=1)]
    outs = [("y", y), ("y1", y1)]
    m = make_model(nodes, [("x", x)], outs, 20, initializers=[("axis", axis)])
    return m, [("x", x)], outs, {"rtol": 1e-4, "atol": 1e-5}


@case
def cast_19_saturate():
    x = np.array([[1.5, -2.25, 300.0]], dtype=np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.DOUBLE, saturate=1),
             helper.make_node("CastLike", ["x", "like"], ["i"], saturate=0)]
    outs = [("h", x.astype(np.float64)), ("i", x.astype(np.int32))]
    m = make_model(nodes, [("x", x)], outs, 19, initializers=[("like", np.zeros(1, np.int32))])
    return m, [("x", x)], outs, {}


@case
def rms_normalization_23():
    x = f32(2, 3, 8)
    scale = f32(8)
    x64 = x.astype(np.float64)
    y = (x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + 1e-5) * scale).astype(np.float32)
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1)
    m = make_model([node], [("x", x)], [("y", y)], 23, initializers=[("scale", scale)])
    return m, [("x", x)], [("y", y)], {"rtol": 1e-4, "atol": 1e-5}


def rotary_reference(x, cos, sin, interleaved, num_heads=0, rotary_dim=0, positions=None):
    x = x.astype(np.float64)
    packed = x.ndim == 3
    if packed:
        b, s, hidden = x.shape
        x4 = x.reshape(b, s, num_heads, hidden // num_heads)
    else:
        x4 = x.transpose(0, 2, 1, 3)  # [b, s, heads, d]
    d = x4.shape[-1]
    rd = rotary_dim or d
    if positions is not None:
        cos, sin = cos[positions], sin[positions]
    cos = cos[:, :, None, :].astype(np.float64)
    sin = sin[:, :, None, :].astype(np.float64)
    rot, rest = x4[..., :rd], x4[..., rd:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., : rd // 2], rot[..., rd // 2:]
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        rotated = np.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rotated = np.concatenate([real, imag], axis=-1)
    y4 = np.concatenate([rotated, rest], axis=-1)
    y = y4.reshape(x.shape) if packed else y4.transpose(0, 2, 1, 3)
    return y.astype(np.float32)


@case
def rotary_embedding_23():
    x4 = f32(2, 3, 5, 8)  # [batch, heads, seq, head]
    cos4, sin4 = f32(2, 5, 4), f32(2, 5, 4)
    x3 = f32(2, 5, 12)  # 2 heads of 6, rotary dim 4, interleaved, position ids
    cos3, sin3 = f32(10, 2), f32(10, 2)
    pos = rng.integers(0, 10, size=(2, 5)).astype(np.int64)
    nodes = [
        helper.make_node("RotaryEmbedding", ["x4", "cos4", "sin4"], ["y4"]),
        helper.make_node("RotaryEmbedding", ["x3", "cos3", "sin3", "pos"], ["y3"], interleaved=1,
                         num_heads=2, rotary_embedding_dim=4),
    ]
    outs = [("y4", rotary_reference(x4, cos4, sin4, False)),
            ("y3", rotary_reference(x3, cos3, sin3, True, 2, 4, pos))]
    ins = [("x4", x4), ("x3", x3)]
    m = make_model(nodes, ins, outs, 23, initializers=[("cos4", cos4), ("sin4", sin4),
                                                       ("cos3", cos3), ("sin3", sin3),
                                                       ("pos", pos)])
    return m, ins, outs, {"rtol": 1e-5, "atol": 1e-6}


def attention_reference(q, k, v, mask=None, past_k=None, past_v=None, causal=False, scale=None,
                        softcap=0.0, q_heads=0, kv_heads=0):
    packed = q.ndim == 3
    if packed:
        b, s, _ = q.shape
        q = q.reshape(b, s, q_heads, -1).transpose(0, 2, 1, 3)
        k = k.reshape(b, k.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
        v = v.reshape(b, v.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=2)
        v = np.concatenate([past_v, v], axis=2)
    group = q.shape[1] // k.shape[1]
    kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = scale if scale is not None else 1 / np.sqrt(q.shape[-1])
    scores = q @ kk.transpose(0, 1, 3, 2) * scale
    # The softcap comes before the mask (ONNX Runtime's order: a masked -inf stays -inf).
    if softcap:
        scores = softcap * np.tanh(scores / softcap)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    if causal:
        qs, ts = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((qs, ts), bool)), scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = scores / scores.sum(axis=-1, keepdims=True)
    y = probs @ vv
    if packed:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y.astype(np.float32), k.astype(np.float32), v.astype(np.float32)


@case
def attention_23():
    # 4-D, 4 query heads over 2 key/value heads, a float mask, a past of 2 steps.
    q, k, v = f32(1, 4, 3, 8), f32(1, 2, 3, 8), f32(1, 2, 3, 6)
    pk, pv = f32(1, 2, 2, 8), f32(1, 2, 2, 6)
    mask = (f32(3, 5) * 0.5).astype(np.float32)
    y, present_k, present_v = attention_reference(q, k, v, mask, pk, pv)
    # 3-D packed, causal, softcap, bool mask, explicit scale.
    q3, k3, v3 = f32(2, 4, 12), f32(2, 4, 12), f32(2, 4, 12)
    mask3 = np.ones((2, 1, 4, 4), dtype=bool)
    mask3[1, 0, 2, 1] = False
    y3, _, _ = attention_reference(q3, k3, v3, mask3, causal=True, scale=0.3, softcap=2.0,
                                   q_heads=3, kv_heads=3)
    nodes = [
        helper.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"],
                         ["y", "present_k", "present_v"]),
        helper.make_node("Attention", ["q3", "k3", "v3", "mask3"], ["y3"], is_causal=1,
                         scale=0.3, softcap=2.0, q_num_heads=3, kv_num_heads=3),
    ]
    ins = [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv), ("q3", q3), ("k3", k3),
           ("v3", v3)]
    outs = [("y", y), ("present_k", present_k), ("present_v", present_v), ("y3", y3)]
    m = make_model(nodes, ins, outs, 23, initializers=[("mask", mask), ("mask3", mask3)])
    return m, ins, outs, {"rtol": 1e-4, "atol": 1e-5}


@case
def attention_24_nonpad_kv_seqlen():
    # A static KV cache: K/V hold 6 slots of which nonpad_kv_seqlen[b] are valid; with is_causal
    # the 2 queries are the last valid positions (bottom-right: query i sees keys
    # j <= i + nonpad[b] - 2). The second node: no causal mask, a float attn_mask, the padding.
    q, k, v = f32(2, 2, 2, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 4)
    nonpad = np.array([4, 6], np.int64)
    causal_bias = np.zeros((2, 1, 2, 6), np.float32)
    pad_bias = np.zeros((2, 1, 1, 6), np.float32)
    for b in range(2):
        pad_bias[b, 0, 0, nonpad[b]:] = -np.inf
        for i in range(2):
            for j in range(6):
                if j >= nonpad[b] or j > i + nonpad[b] - 2:
                    causal_bias[b, 0, i, j] = -np.inf
    y, _, _ = attention_reference(q, k, v, causal_bias)
    mask = (f32(2, 6) * 0.5).astype(np.float32)
    y2, _, _ = attention_reference(q, k, v, mask[None, None] + pad_bias)
    nodes = [
        helper.make_node("Attention", ["q", "k", "v", "", "", "", "nonpad"], ["y"], is_causal=1),
        helper.make_node("Attention", ["q", "k", "v", "mask", "", "", "nonpad"], ["y2"]),
    ]
    ins = [("q", q), ("k", k), ("v", v)]
    outs = [("y", y), ("y2", y2)]
    m = make_model(nodes, ins, outs, 24, ir_version=10,
                   initializers=[("nonpad", nonpad), ("mask", mask)])
    return m, ins, outs, {"rtol": 1e-4, "atol": 1e-5}


@case
def attention_24_short_mask_and_causal_past():
    # The ONNX reference (24) pads an attn_mask shorter than the total sequence with -inf, and
    # aligns is_causal with a past bottom-right (query i sees keys j <= i + past). ONNX Runtime
    # 1.30 refuses the short mask.
    q, k, v = f32(1, 2, 2, 4), f32(1, 2, 2, 4), f32(1, 2, 2, 4)
    pk, pv = f32(1, 2, 3, 4), f32(1, 2, 3, 4)
    mask = (f32(2, 4) * 0.5).astype(np.float32)  # 4 of the 5 keys
    padded = np.concatenate([mask, np.full((2, 1), -np.inf, np.float32)], axis=1)
    causal = np.where(np.arange(5)[None, :] <= np.arange(2)[:, None] + 3, 0, -np.inf)
    y, present_k, present_v = attention_reference(q, k, v, (padded + causal).astype(np.float32),
                                                  pk, pv)
    nodes = [helper.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"],
                              ["y", "present_k", "present_v"], is_causal=1)]
    ins = [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv)]
    outs = [("y", y), ("present_k", present_k), ("present_v", present_v)]
    m = make_model(nodes, ins, outs, 24, ir_version=10, initializers=[("mask", mask)])
    return m, ins, outs, {"rtol": 1e-4, "atol": 1e-5}


@case
def swish_24():
    x = f32(3, 4)
    y = (x.astype(np.float64) / (1 + np.exp(-1.5 * x.astype(np.float64)))).astype(np.float32)
    node = helper.make_node("Swish", ["x"], ["y"], alpha=1.5)
    m = make_model([node], [("x", x)], [("y", y)], 24)
    return m, [("x", x)], [("y", y)], {"rtol": 1e-5, "atol": 1e-6}


@case
def opset_21_pipeline():
    """Several newer operators in one model, with a symbolic batch: Mish-18 ->
    GroupNormalization-21 -> ReduceMean-18 (axes as input) -> Split-18 (num_outputs) and
    CenterCropPad-18, plus block-wise DequantizeLinear-21 feeding a MatMul."""
    x = f32(2, 4, 3, 3)
    scale, bias = f32(4), f32(4)
    axes = np.array([2, 3], dtype=np.int64)
    crop = np.array([2, 2], dtype=np.int64)
    wq = rng.integers(-100, 100, size=(4, 6)).astype(np.int8)
    wscale = rng.uniform(0.01, 0.05, size=(2, 6)).astype(np.float32)
    mish = (x.astype(np.float64) * np.tanh(np.log1p(np.exp(x.astype(np.float64))))).astype(np.float32)
    gn = group_norm_reference(mish, 2, scale, bias, 1e-5, per_channel=True)
    pooled = gn.mean(axis=(2, 3))  # [N, 4]
    w = (wq.astype(np.float32) * np.repeat(wscale, 2, axis=0)).astype(np.float32)
    logits = (pooled.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)  # [N, 6]
    a, b = logits[:, :3], logits[:, 3:]
    cropped = gn[:, :, 0:2, 0:2]
    nodes = [
        helper.make_node("Mish", ["x"], ["mish"]),
        helper.make_node("GroupNormalization", ["mish", "scale", "bias"], ["gn"], num_groups=2),
        helper.make_node("ReduceMean", ["gn", "axes"], ["pooled"], keepdims=0),
        helper.make_node("DequantizeLinear", ["wq", "wscale"], ["w"], axis=0, block_size=2),
        helper.make_node("MatMul", ["pooled", "w"], ["logits"]),
        helper.make_node("Split", ["logits"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("CenterCropPad", ["gn", "crop"], ["cropped"], axes=[2, 3]),
    ]
    outs = [("a", a), ("b", b), ("cropped", cropped)]
    # The onnx 1.12 checker wants a shape on graph outputs; the batch stays symbolic.
    symbolic = {name: "batch" for name in ("x", "a", "b", "cropped")}
    m = make_model(nodes, [("x", x)], outs, 21, ir_version=10, symbolic=symbolic,
                   initializers=[("scale", scale), ("bias", bias), ("axes", axes), ("crop", crop),
                                 ("wq", wq), ("wscale", wscale)])
    return m, [("x", x)], outs, {"rtol": 1e-4, "atol": 1e-4, "symbolic": True}


@case
def image_decoder_20():
    # A PNG and a JPEG decoded to RGB, BGR and Grayscale; expected: the ONNX reference's decoding
    # (PIL: convert("RGB"), and convert("L") of that for Grayscale).
    import io
    import PIL.Image
    smooth = np.zeros((6, 10, 3), np.uint8)
    smooth[..., 0] = np.arange(10) * 25
    smooth[..., 1] = np.arange(6)[:, None] * 40
    smooth[..., 2] = 90
    streams, ins, outs, nodes = {}, [], [], []
    for name, fmt in (("png", "PNG"), ("jpeg", "JPEG")):
        buf = io.BytesIO()
        PIL.Image.fromarray(smooth).save(buf, fmt)
        data = np.frombuffer(buf.getvalue(), np.uint8).copy()
        decoded = PIL.Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
        rgb = np.array(decoded)
        ins.append((name, data))
        for pixel_format, expected in (("RGB", rgb), ("BGR", rgb[:, :, ::-1].copy()),
                                       ("Grayscale", np.array(decoded.convert("L"))[:, :, None])):
            out = "%s_%s" % (name, pixel_format.lower())
            nodes.append(helper.make_node("ImageDecoder", [name], [out], pixel_format=pixel_format))
            outs.append((out, expected))
    m = make_model(nodes, ins, outs, 20)
    return m, ins, outs, {"rtol": 0, "atol": 0}


# ---------------------------------------------------------------- low-precision types
# float8 (Cast/QDQ 19), int4/uint4 (21), float4e2m1 (23). Expected values come from a numpy model
# of each format written from the spec, not from the engine: every finite code's value from its
# bit layout; a value goes to the nearest code, ties to the even one; beyond the largest finite
# value (after rounding) it saturates, or (saturate=0) becomes +-inf for e5m2 and NaN otherwise.
LOWP_FORMATS = {17: (4, 3, 7, "fn"), 18: (4, 3, 8, "fnuz"), 19: (5, 2, 15, "ieee"),
                20: (5, 2, 16, "fnuz"), 23: (2, 1, 1, "e2m1")}
LOWP_IR = {17: 9, 18: 9, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}


def lowp_decode(t, code):
    e_bits, m_bits, bias, kind = LOWP_FORMATS[t]
    width = e_bits + m_bits
    sign = -1.0 if (code >> width) & 1 else 1.0
    exponent, mantissa = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if (kind == "fnuz" and code == 0x80) or (kind == "fn" and code & 0x7F == 0x7F):
        return float("nan")
    if kind == "ieee" and exponent == (1 << e_bits) - 1:
        return sign * float("inf") if mantissa == 0 else float("nan")
    if exponent == 0:
        return sign * mantissa / (1 << m_bits) * 2.0 ** (1 - bias)
    return sign * (1 + mantissa / (1 << m_bits)) * 2.0 ** (exponent - bias)


def lowp_round(x, t, saturate=True):
    """The float value Cast(x -> type t) holds, for each element of x."""
    e_bits, m_bits, bias, kind = LOWP_FORMATS[t]
    positive = [(lowp_decode(t, c), c) for c in range(1 << (e_bits + m_bits))]
    positive = sorted((v, c) for v, c in positive if np.isfinite(v))
    top, top_code = positive[-1]
    half_ulp = 2.0 ** (np.floor(np.log2(top)) - m_bits) / 2
    out = []
    for v in np.asarray(x, np.float64).reshape(-1):
        if np.isnan(v):
            out.append(6.0 if t == 23 else np.nan)
            continue
        a = abs(v)
        if a > top + half_ulp or (a == top + half_ulp and top_code & 1) or np.isinf(a):
            if saturate or t == 23:
                r = top
            else:
                r = np.inf if kind == "ieee" else np.nan
        else:
            r = min(positive, key=lambda vc: (abs(vc[0] - a), vc[1] & 1))[0]
        out.append(np.copysign(r, v) if not np.isnan(r) else r)
    return np.array(out, np.float32).reshape(np.shape(x))


def lowp_tensor(name, t, dims, codes):
    """An initializer of element type t (17..24) from its codes, 4-bit packed two per byte."""
    codes = [int(c) & (0x0F if t in (21, 22, 23) else 0xFF) for c in codes]
    if t in (21, 22, 23):
        padded = codes + [0] * (len(codes) % 2)
        raw = bytes(lo | (hi << 4) for lo, hi in zip(padded[0::2], padded[1::2]))
    else:
        raw = bytes(codes)
    tensor = TensorProto()
    tensor.name = name
    tensor.data_type = t
    tensor.dims.extend(dims)
    tensor.raw_data = raw
    return tensor


def lowp_inputs():
    special = [0.0, -0.0, 1.0, 0.3, -2.5, 448, 449, 464, 470, 1000, -1000, 240, 250, 57344,
               61440, 1e6, np.inf, -np.inf, np.nan, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10,
               2.0 ** -17]
    sweep = rng.standard_normal(41) * np.exp(rng.uniform(-8, 8, 41))
    return np.array(special + list(sweep), np.float32)


@case
def cast_19_float8_saturate():
    x = lowp_inputs()
    nodes, outs = [], []
    for t, label in ((17, "e4m3fn"), (18, "e4m3fnuz"), (19, "e5m2"), (20, "e5m2fnuz")):
        for saturate in (1, 0):
            name = "%s_sat%d" % (label, saturate)
            nodes.append(helper.make_node("Cast", ["x"], [name + "_q"], to=t, saturate=saturate))
            nodes.append(helper.make_node("Cast", [name + "_q"], [name], to=TensorProto.FLOAT))
            outs.append((name, lowp_round(x, t, saturate)))
    m = make_model(nodes, [("x", x)], outs, 19, ir_version=9)
    return m, [("x", x)], outs, {"rtol": 0, "atol": 0}


@case
def cast_21_int4_uint4():
    # Rounded (no ties here: ONNX Runtime rounds them away from zero, onnxlens to even), then the
    # low four bits, as integer narrowing does.
    x = np.array([-9.4, -8.6, -7.7, -0.4, 0.6, 1.7, 2.4, 7.49, 7.6, 100, -3, 14.4, 15.6, 16, 1e9],
                 np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["i4"], to=22),
             helper.make_node("Cast", ["i4"], ["int4"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["x"], ["u4"], to=21),
             helper.make_node("Cast", ["u4"], ["uint4"], to=TensorProto.FLOAT)]
    r = np.rint(x.astype(np.float64))
    outs = [("int4", (np.mod(r + 8, 16) - 8).astype(np.float32)),
            ("uint4", np.mod(r, 16).astype(np.float32))]
    m = make_model(nodes, [("x", x)], outs, 21, ir_version=10)
    return m, [("x", x)], outs, {"rtol": 0, "atol": 0}


@case
def cast_23_float4e2m1():
    x = np.array([0, 0.25, 0.3, -2.5, 1.25, 1.75, 5, 7, -100, 3.5, -0.75], np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["f4"], to=23),
             helper.make_node("Cast", ["f4"], ["y"], to=TensorProto.FLOAT)]
    outs = [("y", lowp_round(x, 23))]
    m = make_model(nodes, [("x", x)], outs, 23, ir_version=11)
    return m, [("x", x)], outs, {"rtol": 0, "atol": 0}


@case
def quantize_dequantize_19_float8():
    x = (f32(2, 8) * 100).astype(np.float32)
    scale = np.float32(0.5)
    outs, nodes, inits = [], [], [("scale", np.array(scale, np.float32))]
    for t, label in ((17, "e4m3fn"), (19, "e5m2")):
        nodes.append(helper.make_node("QuantizeLinear", ["x", "scale", "zero_" + label],
                                      ["q_" + label]))
        nodes.append(helper.make_node("DequantizeLinear", ["q_" + label, "scale", "zero_" + label],
                                      ["dq_" + label]))
        outs.append(("dq_" + label, (lowp_round(x / scale, t) * scale).astype(np.float32)))
    m = make_model(nodes, [("x", x)], outs, 19, ir_version=9, initializers=inits)
    m.graph.initializer.extend([lowp_tensor("zero_e4m3fn", 17, [], [0]),
                                lowp_tensor("zero_e5m2", 19, [], [0])])
    return m, [("x", x)], outs, {"rtol": 0, "atol": 0}


@case
def quantize_dequantize_21_int4_blockwise():
    x = (f32(2, 7, 3) * 2).astype(np.float32)
    block = 4  # axis 1: 7 -> 2 blocks, the last one short; an odd element count
    scale = rng.uniform(0.1, 0.5, size=(2, 2, 3)).astype(np.float32)
    zero = rng.integers(-3, 4, size=(2, 2, 3))
    s_full = np.repeat(scale, block, axis=1)[:, :7]
    z_full = np.repeat(zero, block, axis=1)[:, :7].astype(np.float32)
    q = np.clip(np.rint(x / s_full) + z_full, -8, 7)
    dq = ((q - z_full) * s_full).astype(np.float32)
    u_zero = rng.integers(0, 16, size=(2, 2, 3))
    uz_full = np.repeat(u_zero, block, axis=1)[:, :7].astype(np.float32)
    uq = np.clip(np.rint(x / s_full) + uz_full, 0, 15)
    udq = ((uq - uz_full) * s_full).astype(np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1, block_size=block),
        helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["dq"], axis=1,
                         block_size=block),
        helper.make_node("QuantizeLinear", ["x", "scale", "uzero"], ["uq"], axis=1,
                         block_size=block),
        helper.make_node("DequantizeLinear", ["uq", "scale", "uzero"], ["udq"], axis=1,
                         block_size=block),
    ]
    outs = [("dq", dq), ("udq", udq)]
    m = make_model(nodes, [("x", x)], outs, 21, ir_version=10, initializers=[("scale", scale)])
    m.graph.initializer.extend([lowp_tensor("zero", 22, [2, 2, 3], zero.reshape(-1)),
                                lowp_tensor("uzero", 21, [2, 2, 3], u_zero.reshape(-1))])
    return m, [("x", x)], outs, {"rtol": 1e-6, "atol": 1e-6}


@case
def dequantize_21_int4_per_axis_weights():
    # An int4 weight initializer (odd element count, packed) dequantized per output channel and
    # used by MatMul, as 4-bit weight-only quantized exports do.
    w = rng.integers(-8, 8, size=(5, 3))
    scale = rng.uniform(0.01, 0.1, size=3).astype(np.float32)
    x = f32(2, 5)
    y = (x @ (w * scale).astype(np.float32)).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w", "scale"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    m = make_model(nodes, [("x", x)], [("y", y)], 21, ir_version=10,
                   initializers=[("scale", scale)])
    m.graph.initializer.extend([lowp_tensor("w", 22, [5, 3], w.reshape(-1))])
    return m, [("x", x)], [("y", y)], {"rtol": 1e-5, "atol": 1e-6}


# ---------------------------------------------------------------- checks
def check_valid(name, path, model, run, outputs, options):
    code, out, err = run_cli("check", "--json", path)
    expect(code == 0, "%s: check exits %d\n%s%s" % (name, code, out, err))
    if code in (0, 1):
        doc = json.loads(out)
        note = doc["checker"].get("note", "")
        expect("checked by onnxlens instead" in note, "%s: no note in %s" % (name, doc["checker"]))
    code, out, err = run_cli("info", "--json", path)
    expect(code == 0, "%s: info exits %d %s" % (name, code, err))
    if code == 0:
        doc = json.loads(out)
        si = doc["shape_inference"]
        expect(si["known_edges"] == si["total_edges"],
               "%s: %d of %d edges shaped (%s)" % (name, si["known_edges"], si["total_edges"], si))
    if run:
        args = ["compare", path]
        if "rtol" in options:
            args += ["--rtol", str(options["rtol"])]
        if "atol" in options:
            args += ["--atol", str(options["atol"])]
        code, out, err = run_cli(*args)
        expect(code == 0, "%s: compare exits %d\n%s%s" % (name, code, out, err))


def check_invalid_newer_nodes(root):
    x = f32(2, 3)
    cases = {
        "reduce_mean_18_three_inputs": helper.make_node("ReduceMean", ["x", "axes", "axes"], ["y"]),
        "group_norm_18_no_num_groups": helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"]),
        "split_18_num_outputs_float": helper.make_node("Split", ["x"], ["y"], num_outputs=1.5),
        "mish_18_unknown_attribute": helper.make_node("Mish", ["x"], ["y"], alpha=1.0),
    }
    for name, node in cases.items():
        m = make_model([node], [("x", x)], [("y", x)], 18,
                       initializers=[("axes", np.array([1], np.int64)),
                                     ("s", np.ones(3, np.float32)), ("b", np.ones(3, np.float32))])
        path = write_case(root, name, m, [], [])
        code, out, err = run_cli("check", path)
        expect(code == 1, "%s: check exits %d (want 1)\n%s%s" % (name, code, out, err))
        expect(name.split("_")[0] != "" and "FAILED" in out, "%s: no FAILED in\n%s" % (name, out))


def check_opset_99(root):
    x = f32(2, 3)
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", x)], [("y", np.maximum(x, 0))], 99)
    path = write_case(root, "relu_opset_99", m, [("x", x)], [("y", np.maximum(x, 0))])
    code, out, err = run_cli("check", path)
    expect(code == 0 and "opset 99 is newer than this build knows" in out,
           "opset 99: check exits %d\n%s%s" % (code, out, err))
    for command in ("run", "compare", "bench"):
        args = [command, path] + (["--runs", "1", "--warmup", "0"] if command == "bench" else [])
        code, out, err = run_cli(*args)
        expect(code == 2 and "opset 99" in err and "--allow-newer-opset" in err,
               "opset 99: %s exits %d\n%s%s" % (command, code, out, err))
        code, out, err = run_cli(*(args + ["--allow-newer-opset"]))
        expect(code == 0 and "warning" in err,
               "opset 99: %s --allow-newer-opset exits %d\n%s%s" % (command, code, out, err))


def check_ir_9(root):
    x = f32(2, 3)
    y = x.mean(axis=1, keepdims=True)
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"])
    m = make_model([node], [("x", x)], [("y", y)], 19, ir_version=9,
                   initializers=[("axes", np.array([1], np.int64))])
    path = write_case(root, "reduce_mean_ir9", m, [("x", x)], [("y", y)])
    code, out, err = run_cli("check", path)
    expect(code == 0 and "IR version 9" in out, "IR 9: check exits %d\n%s%s" % (code, out, err))


def main():
    global CLI
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    CLI = args[0]
    keep = args[args.index("--keep") + 1] if "--keep" in args else None
    only = args[args.index("-k") + 1] if "-k" in args else None
    root = keep or tempfile.mkdtemp(prefix="onnxlens-newer-opsets-")
    for name, fn in CASES.items():
        if only and only not in name:
            continue
        model, inputs, outputs, options = fn()
        path = write_case(root, name, model, inputs, outputs)
        check_valid(name, path, model, options.get("run", True), outputs, options)
    if not only:
        check_invalid_newer_nodes(root)
        check_opset_99(root)
        check_ir_9(root)
    if not keep:
        import shutil
        shutil.rmtree(root, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
