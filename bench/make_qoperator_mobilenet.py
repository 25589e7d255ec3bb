#!/usr/bin/python3
"""A small MobileNetV2-like model in the QOperator layout that ONNX Runtime's
quantize_static(..., quant_format=QuantFormat.QOperator) writes (issue 29).

The float network (seeded random weights, BatchNorm already folded) is run here in numpy on a few
seeded calibration images to get every activation's range, then written quantized the way the
quantizer does it:

    input (float) -> QuantizeLinear
      -> QLinearConv (stem, ReLU folded into its output range)
      -> inverted residual blocks: 1x1 expand QLinearConv, 3x3 depthwise QLinearConv (group = C),
         1x1 project QLinearConv (linear), com.microsoft QLinearAdd for the residual connections
      -> 1x1 QLinearConv -> com.microsoft QLinearGlobalAveragePool -> Flatten
      -> QLinearMatMul (classifier weights) -> com.microsoft QLinearAdd (classifier bias)
      -> DequantizeLinear -> logits (float)

Activations are uint8 (asymmetric, zero point from the range) or int8 (--activations int8);
weights int8, symmetric, per tensor or per output channel (--per-channel), in [-127, 127] or with
--reduce-range in [-64, 64] (quantize_static's reduce_range); convolution biases int32 with scale
x_scale * w_scale, as the quantizer writes them.

usage: make_qoperator_mobilenet.py OUT_DIR [--activations uint8|int8] [--per-channel]
                                   [--reduce-range] [--size 32] [--full] [--expose] [--seed 0]
--full: torchvision MobileNetV2's geometry at 224x224 (the issue's speed model) instead of the small
one (16-channel stem, five blocks, 32x32) that the agreement checks use.
Writes OUT_DIR/qoperator_mobilenet.onnx, OUT_DIR/input.npy and OUT_DIR/manifest.json
({"model", "inputs": [{"name", "file"}]}: what bench/ort_bench.mjs reads). --expose also makes
every quantized activation a graph output, for a tensor-by-tensor comparison.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (expansion, output channels, stride, residual) per inverted residual block, after a 16-channel
# stem; the first block has no expansion (MobileNetV2's first bottleneck).
BLOCKS = [(1, 8, 1, False), (6, 12, 2, False), (6, 12, 1, True), (6, 16, 2, False), (6, 16, 1, True)]
STEM_CHANNELS = 16
HEAD_CHANNELS = 64
CLASSES = 10


def full_mobilenet_v2_blocks():
    """torchvision's MobileNetV2 (width 1.0): (expansion t, channels c, repeats n, stride s) rows,
    each repeat a block; the first of a row strides, a block with stride 1 and equal channels adds
    its input."""
    rows = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
            (6, 320, 1, 1)]
    blocks, cin = [], 32
    for t, c, n, s in rows:
        for i in range(n):
            stride = s if i == 0 else 1
            blocks.append((t, c, stride, stride == 1 and cin == c))
            cin = c
    return blocks


def conv2d(x, w, b, stride, pad, group):
    """Float convolution, x [N, C, H, W], w [M, C / group, K, K]."""
    n, c, h, wd = x.shape
    m, cg, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    out = np.empty((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        cols = np.stack([xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                         for i in range(k) for j in range(k)], axis=2).reshape(n, cg * k * k, oh * ow)
        wg = w[g * mg:(g + 1) * mg].reshape(mg, cg * k * k)
        out[:, g * mg:(g + 1) * mg] = np.einsum("mk,nkp->nmp", wg, cols).reshape(n, mg, oh, ow)
    return out + b[None, :, None, None]


class Net:
    """The float network: a list of layers, each a dict; run() records every activation."""

    def __init__(self, rng, blocks, stem, head, classes):
        def conv(cin, cout, k, stride, group, relu):
            fan_in = cin // group * k * k
            return {"kind": "conv", "w": rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k)),
                    "b": rng.normal(0, 0.1, cout), "stride": stride, "pad": k // 2, "group": group,
                    "relu": relu}

        self.layers = [conv(3, stem, 3, 2, 1, True)]
        cin = stem
        for expansion, cout, stride, residual in blocks:
            hidden = cin * expansion
            start = len(self.layers)
            if expansion != 1:
                self.layers.append(conv(cin, hidden, 1, 1, 1, True))
            self.layers.append(conv(hidden, hidden, 3, stride, hidden, True))
            self.layers.append(conv(hidden, cout, 1, 1, 1, False))
            if residual:
                self.layers.append({"kind": "add", "from": start - 1})
            cin = cout
        self.layers.append(conv(cin, head, 1, 1, 1, True))
        self.layers.append({"kind": "gap"})
        self.fc_w = rng.normal(0, np.sqrt(1.0 / head), (head, classes))
        self.fc_b = rng.normal(0, 0.1, classes)

    def run(self, x):
        """Every activation: [input, layer outputs..., fc product, logits]."""
        acts = [x]
        for layer in self.layers:
            cur = acts[-1]
            if layer["kind"] == "conv":
                y = conv2d(cur, layer["w"], layer["b"], layer["stride"], layer["pad"], layer["group"])
                acts.append(np.maximum(y, 0) if layer["relu"] else y)
            elif layer["kind"] == "add":
                acts.append(cur + acts[layer["from"] + 1])
            else:
                acts.append(cur.mean(axis=(2, 3)))
        product = acts[-1] @ self.fc_w
        acts += [product, product + self.fc_b]
        return acts


def activation_params(lo, hi, qtype):
    """Asymmetric scale and zero point covering [min(lo, 0), max(hi, 0)] (the quantizer's rule)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    qmin, qmax = (0, 255) if qtype == "uint8" else (-128, 127)
    scale = (hi - lo) / (qmax - qmin) if hi > lo else 1.0
    zero = int(np.clip(round(qmin - lo / scale), qmin, qmax))
    return np.float32(scale), zero


def weight_params(w, per_channel, qmax):
    """Symmetric int8 scales: max |w| / qmax for the tensor or per output channel (axis 0)."""
    if per_channel:
        top = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    else:
        top = np.array([np.abs(w).max()])
    return np.maximum(top, 1e-8).astype(np.float32) / qmax


def build(args):
    rng = np.random.default_rng(args.seed)
    if args.full:
        net, classes = Net(rng, full_mobilenet_v2_blocks(), 32, 1280, 1000), 1000
    else:
        net, classes = Net(rng, BLOCKS, STEM_CHANNELS, HEAD_CHANNELS, CLASSES), CLASSES
    calibration = rng.normal(0, 1, (4 if args.full else 8, 3, args.size, args.size))
    acts = net.run(calibration)
    ranges = [(a.min(), a.max()) for a in acts]
    qtype = args.activations
    onnx_q = TensorProto.UINT8 if qtype == "uint8" else TensorProto.INT8
    np_q = np.uint8 if qtype == "uint8" else np.int8
    wmax = 64 if args.reduce_range else 127

    inits, nodes, exposed = [], [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def act_params(i, name):
        scale, zero = activation_params(*ranges[i], qtype)
        return const(name + "_scale", np.float32(scale)), const(name + "_zero_point", np_q(zero)), scale

    # Input quantization.
    x_scale_name, x_zero_name, x_scale = act_params(0, "input_q")
    nodes.append(helper.make_node("QuantizeLinear", ["input", x_scale_name, x_zero_name], ["input_q"],
                                  name="input_QuantizeLinear"))
    names = ["input_q"]  # quantized tensor of each activation index
    params = [(x_scale_name, x_zero_name, x_scale)]
    for i, layer in enumerate(net.layers):
        src, (s_name, z_name, s) = names[-1], params[-1]
        out = "act%d_q" % (i + 1)
        o_scale, o_zero, o_s = act_params(i + 1, out)
        if layer["kind"] == "conv":
            w = layer["w"]
            w_scale = weight_params(w, args.per_channel, wmax)
            scale_b = w_scale.reshape(-1, 1, 1, 1)
            wq = np.clip(np.round(w / scale_b), -wmax, wmax).astype(np.int8)
            bias = np.round(layer["b"] / (np.float64(s) * np.resize(w_scale, w.shape[0]))).astype(np.int32)
            w_scale_value = w_scale if args.per_channel else w_scale[0]
            inputs = [src, s_name, z_name, const(out + "_W", wq), const(out + "_W_scale", w_scale_value),
                      const(out + "_W_zero_point", np.zeros_like(w_scale_value, dtype=np.int8)),
                      o_scale, o_zero, const(out + "_B", bias)]
            attrs = {"kernel_shape": [w.shape[2], w.shape[3]], "strides": [layer["stride"]] * 2,
                     "pads": [layer["pad"]] * 4, "group": layer["group"], "dilations": [1, 1]}
            nodes.append(helper.make_node("QLinearConv", inputs, [out], name="conv%d" % (i + 1), **attrs))
        elif layer["kind"] == "add":
            other = layer["from"] + 1
            a_scale, a_zero, _ = params[other]
            nodes.append(helper.make_node("QLinearAdd", [names[other], a_scale, a_zero, src, s_name, z_name,
                                                         o_scale, o_zero], [out], name="add%d" % (i + 1),
                                          domain="com.microsoft"))
        else:
            gap = out + "_pooled"
            nodes.append(helper.make_node("QLinearGlobalAveragePool", [src, s_name, z_name, o_scale, o_zero],
                                          [gap], name="gap%d" % (i + 1), domain="com.microsoft",
                                          channels_last=0))
            nodes.append(helper.make_node("Flatten", [gap], [out], name="flatten", axis=1))
        names.append(out)
        params.append((o_scale, o_zero, o_s))
        exposed.append((out, [1] + list(acts[i + 1].shape[1:])))

    # Classifier: QLinearMatMul with int8 weights, then QLinearAdd with the quantized bias.
    src, (s_name, z_name, s) = names[-1], params[-1]
    fc_scale = weight_params(net.fc_w, False, wmax)[0]
    fc_q = np.clip(np.round(net.fc_w / fc_scale), -wmax, wmax).astype(np.int8)
    product = "fc_q"
    p_scale, p_zero, p_s = act_params(len(acts) - 2, product)
    nodes.append(helper.make_node("QLinearMatMul", [src, s_name, z_name, const("fc_W", fc_q),
                                                    const("fc_W_scale", np.float32(fc_scale)),
                                                    const("fc_W_zero_point", np.int8(0)),
                                                    p_scale, p_zero], [product], name="fc"))
    b_scale, b_zero = activation_params(net.fc_b.min(), net.fc_b.max(), qtype)
    qmin, qmax = (0, 255) if qtype == "uint8" else (-128, 127)
    bias_q = np.clip(np.round(net.fc_b / b_scale) + b_zero, qmin, qmax).astype(np_q)
    logits_q = "logits_q"
    l_scale, l_zero, _ = act_params(len(acts) - 1, logits_q)
    nodes.append(helper.make_node("QLinearAdd", [product, p_scale, p_zero, const("fc_B", bias_q),
                                                 const("fc_B_scale", np.float32(b_scale)),
                                                 const("fc_B_zero_point", np_q(b_zero)), l_scale, l_zero],
                                  [logits_q], name="fc_bias", domain="com.microsoft"))
    nodes.append(helper.make_node("DequantizeLinear", [logits_q, l_scale, l_zero], ["logits"],
                                  name="output_DequantizeLinear"))
    exposed += [(product, [1, classes]), (logits_q, [1, classes])]

    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])]
    if args.expose:
        outputs += [helper.make_tensor_value_info(name, onnx_q, shape) for name, shape in exposed]
    graph = helper.make_graph(nodes, "qoperator_mobilenet",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                             [1, 3, args.size, args.size])],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="bench/make_qoperator_mobilenet.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, rng.normal(0, 1, (1, 3, args.size, args.size)).astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--activations", choices=["uint8", "int8"], default="uint8")
    parser.add_argument("--per-channel", action="store_true", help="per-output-channel weight scales")
    parser.add_argument("--reduce-range", action="store_true",
                        help="7-bit weights in [-64, 64] (quantize_static's reduce_range)")
    parser.add_argument("--size", type=int, help="input height and width (default 32, 224 with --full)")
    parser.add_argument("--full", action="store_true",
                        help="torchvision MobileNetV2's geometry (32-channel stem, 17 inverted residual "
                             "blocks, 1280-channel head, 1000 classes) instead of the small one")
    parser.add_argument("--expose", action="store_true", help="every quantized activation is an output too")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.size is None:
        args.size = 224 if args.full else 32
    os.makedirs(args.out_dir, exist_ok=True)
    model, image = build(args)
    model_path = os.path.join(args.out_dir, "qoperator_mobilenet.onnx")
    input_path = os.path.join(args.out_dir, "input.npy")
    onnx.save(model, model_path)
    np.save(input_path, image)
    manifest = {"model": model_path, "inputs": [{"name": "input", "file": input_path}]}
    with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(model_path)


if __name__ == "__main__":
    main()
