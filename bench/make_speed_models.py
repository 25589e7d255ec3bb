#!/usr/bin/python3
"""The benchmark models of the engine's second speed round (issue 22), with random seeded weights:
the shapes of what users bring besides the classic ImageNet CNNs and BERT-base.

  detector     a DB-style text detector: MobileNetV3-like backbone (HardSwish, depthwise
               convolutions), an FPN neck (1x1 lateral convolutions, nearest Resize x2, Add,
               Concat of four upsampled maps) and a head of two ConvTranspose with a Sigmoid;
               1x3x640x640 (PyTorch export, opset 17)
  recognizer   a CRNN text recognizer: a CNN that brings the height to 1, a two-layer
               bidirectional LSTM over 80 steps and a 6,625-class Softmax; 1x3x48x320
  small_cnn    a text-direction classifier: four small convolution blocks, global pooling and a
               two-class head; 1x3x48x192 (sub-millisecond)
  vad_stream   a streaming voice-activity detector in onnx.helper calls: an If on the sample rate
               chooses a 16 kHz or an 8 kHz branch, each a STFT-as-Conv encoder and an LSTM whose
               state comes in and goes out (one 32 ms chunk per call)
  minilm_seq16 a MiniLM-sized BERT encoder (6 layers, hidden 384, 12 heads) at batch 1 and
               sequence 16: the latency-bound transformer case
  overhead_add   one Add of two [1, 16] floats: what a run costs beyond its kernels (feeds,
                 outputs, the executor's set-up; issue 31's per-run overhead)
  overhead_chain 32 elementwise nodes (Add, Mul, Relu, Tanh in turn) on [1, 64]: the cost per node
  overhead_if    an If on a bool input choosing between two one-node branches on [1, 16]: a
                 subgraph's cost per run
  overhead_loop  a Loop of 16 iterations whose body adds a constant to [1, 16]: a body's cost per
                 iteration

usage: make_speed_models.py NAME OUT.onnx
Not committed: bench/make_bench_models.py calls this into the cache folder.
"""
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["detector", "recognizer", "small_cnn", "vad_stream", "minilm_seq16",
         "overhead_add", "overhead_chain", "overhead_if", "overhead_loop"]


def torch_modules():
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, stride=1, groups=1, act="hswish"):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2 if isinstance(k, int) else (k[0] // 2, k[1] // 2),
                            groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if act == "hswish":
            layers.append(nn.Hardswish())
        elif act == "relu":
            layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, cin, expand, cout, k, stride, act):
            super().__init__()
            self.block = nn.Sequential(conv_bn(cin, expand, 1, act=act),
                                       conv_bn(expand, expand, k, stride, groups=expand, act=act),
                                       conv_bn(expand, cout, 1, act=None))
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.block(x)
            return x + y if self.residual else y

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, 16, 3, 2)
            # (input, expand, output, kernel, stride, activation) per block; stages end at
            # strides 4, 8, 16 and 32.
            spec = [[(16, 16, 16, 3, 1, "relu"), (16, 64, 24, 3, 2, "relu"), (24, 72, 24, 3, 1, "relu")],
                    [(24, 72, 40, 5, 2, "relu"), (40, 120, 40, 5, 1, "relu"), (40, 120, 40, 5, 1, "relu")],
                    [(40, 240, 80, 3, 2, "hswish"), (80, 200, 80, 3, 1, "hswish"),
                     (80, 184, 80, 3, 1, "hswish"), (80, 480, 112, 3, 1, "hswish")],
                    [(112, 672, 160, 5, 2, "hswish"), (160, 960, 160, 5, 1, "hswish")]]
            self.stages = nn.ModuleList(nn.Sequential(*[InvertedResidual(*b) for b in s]) for s in spec)
            widths, neck = [24, 40, 112, 160], 96
            self.lateral = nn.ModuleList(nn.Conv2d(w, neck, 1, bias=False) for w in widths)
            self.smooth = nn.ModuleList(nn.Conv2d(neck, neck // 4, 3, padding=1, bias=False) for _ in widths)
            self.head = nn.Sequential(
                nn.Conv2d(neck, neck // 4, 3, padding=1, bias=False), nn.BatchNorm2d(neck // 4), nn.ReLU(),
                nn.ConvTranspose2d(neck // 4, neck // 4, 2, 2), nn.BatchNorm2d(neck // 4), nn.ReLU(),
                nn.ConvTranspose2d(neck // 4, 1, 2, 2), nn.Sigmoid())

        def forward(self, image):
            x = self.stem(image)
            features = []
            for stage in self.stages:
                x = stage(x)
                features.append(x)
            lat = [conv(f) for conv, f in zip(self.lateral, features)]
            up = nn.functional.interpolate
            for i in range(len(lat) - 2, -1, -1):
                lat[i] = lat[i] + up(lat[i + 1], scale_factor=2.0, mode="nearest")
            maps = [conv(f) for conv, f in zip(self.smooth, lat)]
            maps = [maps[0]] + [up(m, scale_factor=float(2 ** i), mode="nearest")
                                for i, m in enumerate(maps[1:], start=1)]
            return self.head(torch.cat(maps[::-1], dim=1))

    class Recognizer(nn.Module):
        def __init__(self, classes=6625, hidden=96):
            super().__init__()
            self.cnn = nn.Sequential(
                conv_bn(3, 32, 3, 2), conv_bn(32, 32, 3, 1, groups=32), conv_bn(32, 64, 1),
                conv_bn(64, 64, 3, (2, 1), groups=64), conv_bn(64, 128, 1),
                conv_bn(128, 128, 3, 1, groups=128), conv_bn(128, 128, 1),
                conv_bn(128, 128, 3, (2, 1), groups=128), conv_bn(128, 256, 1),
                conv_bn(256, 256, 5, 1, groups=256), conv_bn(256, 256, 1),
                conv_bn(256, 256, 3, (2, 1), groups=256), conv_bn(256, 288, 1),
                nn.MaxPool2d(2, 2))
            self.lstm = nn.LSTM(288, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, image):
            x = self.cnn(image)              # N x C x 1 x W
            x = x.squeeze(2).permute(2, 0, 1)  # W x N x C
            x, _ = self.lstm(x)
            return torch.softmax(self.fc(x), dim=-1)

    class SmallCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                conv_bn(3, 16, 3, 2, act="relu"), conv_bn(16, 24, 3, 2, act="relu"),
                conv_bn(24, 32, 3, 2, act="relu"), conv_bn(32, 48, 3, 2, act="relu"))
            self.head = nn.Linear(48, 2)

        def forward(self, image):
            x = self.features(image).mean(dim=(2, 3))
            return torch.softmax(self.head(x), dim=-1)

    return torch, {"detector": (Detector, [(1, 3, 640, 640)], ["image"], ["probability_map"]),
                   "recognizer": (Recognizer, [(1, 3, 48, 320)], ["image"], ["character_probabilities"]),
                   "small_cnn": (SmallCnn, [(1, 3, 48, 192)], ["image"], ["direction"])}


def export_torch(name, path):
    torch, modules = torch_modules()
    module, shapes, inputs, outputs = modules[name]
    torch.manual_seed(0)
    model = module().eval()
    # Random BatchNorm statistics, so that the folded weights are not the identity.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    args = tuple(torch.randn(*s) for s in shapes)
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=inputs, output_names=outputs, opset_version=17)


def export_minilm(path):
    import torch

    spec = importlib.util.spec_from_file_location(
        "make_samples", os.path.join(HERE, "..", "resources", "samples", "make_samples.py"))
    samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    torch.manual_seed(0)
    model = samples.BertEncoder(vocab=30522, hidden=384, layers=6, heads=12, intermediate=1536,
                                max_positions=512).eval()
    ids = torch.randint(0, 30522, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}, "pooled_output": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state", "pooled_output"], dynamic_axes=axes,
                          opset_version=14)


def write_vad_stream(path):
    """Silero-VAD-shaped: If(sr == 16000) picks the 16 kHz branch (512 samples, window 256, hop
    128) or the 8 kHz one (the first 256 samples, window 128, hop 64); both feed an encoder and an
    LSTM whose state (h, c stacked in `state`) is an input and an output."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(11)
    hidden = 64
    inits = []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def stft_basis(name, window):
        bins = window // 2 + 1
        n = np.arange(window)
        hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / window)
        k = np.arange(bins)[:, None]
        basis = np.concatenate([np.cos(2 * np.pi * k * n / window) * hann,
                                -np.sin(2 * np.pi * k * n / window) * hann]).astype(np.float32)
        inits.append(numpy_helper.from_array(basis.reshape(2 * bins, 1, window), name))
        return bins

    # Shared by both branches: the LSTM, the head and the state layout.
    const("audio_shape", [1, 1, -1])
    const("squeeze_axes", [0, 1])
    const("state_h", [0], np.int64)
    weight("lstm_w", (1, 4 * hidden, hidden), 0.1)
    weight("lstm_r", (1, 4 * hidden, hidden), 0.1)
    weight("lstm_b", (1, 8 * hidden), 0.1)
    weight("head_w", (1, hidden), 0.2)
    weight("head_b", (1,), 0.1)
    const("split_state", [1, 1])
    const("slice_start", [0])
    const("slice_end_8k", [256])
    const("slice_axis", [1])
    const("reduce_axes", [2])

    def branch(tag, window, hop, sliced):
        bins = stft_basis("basis_" + tag, window)
        const("split_" + tag, [bins, bins])
        weight("enc1_w_" + tag, (hidden, bins, 3), 0.05)
        weight("enc1_b_" + tag, (hidden,), 0.1)
        weight("enc2_w_" + tag, (hidden, hidden, 3), 0.07)
        weight("enc2_b_" + tag, (hidden,), 0.1)
        p = tag + "_"
        nodes = []
        source = "audio"
        if sliced:
            nodes.append(helper.make_node("Slice", ["audio", "slice_start", "slice_end_8k", "slice_axis"],
                                          [p + "audio"]))
            source = p + "audio"
        nodes += [
            helper.make_node("Reshape", [source, "audio_shape"], [p + "audio_3d"]),
            helper.make_node("Conv", [p + "audio_3d", "basis_" + tag], [p + "spectrum"], strides=[hop]),
            helper.make_node("Split", [p + "spectrum", "split_" + tag], [p + "real", p + "imag"], axis=1),
            helper.make_node("Mul", [p + "real", p + "real"], [p + "real_sq"]),
            helper.make_node("Mul", [p + "imag", p + "imag"], [p + "imag_sq"]),
            helper.make_node("Add", [p + "real_sq", p + "imag_sq"], [p + "power"]),
            helper.make_node("Sqrt", [p + "power"], [p + "magnitude"]),
            helper.make_node("Conv", [p + "magnitude", "enc1_w_" + tag, "enc1_b_" + tag], [p + "enc1"],
                             pads=[1, 1]),
            helper.make_node("Relu", [p + "enc1"], [p + "enc1_relu"]),
            helper.make_node("Conv", [p + "enc1_relu", "enc2_w_" + tag, "enc2_b_" + tag], [p + "enc2"],
                             pads=[1, 1], strides=[2]),
            helper.make_node("Relu", [p + "enc2"], [p + "enc2_relu"]),
            helper.make_node("ReduceMean", [p + "enc2_relu"], [p + "pooled"], axes=[2], keepdims=1),
            helper.make_node("Transpose", [p + "pooled"], [p + "step"], perm=[2, 0, 1]),
            helper.make_node("Split", ["state", "split_state"], [p + "h", p + "c"], axis=0),
            helper.make_node("LSTM", [p + "step", "lstm_w", "lstm_r", "lstm_b", "", p + "h", p + "c"],
                             [p + "lstm_y", p + "hn", p + "cn"], hidden_size=hidden),
            helper.make_node("Concat", [p + "hn", p + "cn"], [p + "state_out"], axis=0),
            helper.make_node("Squeeze", [p + "lstm_y", "squeeze_axes"], [p + "lstm_out"]),
            helper.make_node("Relu", [p + "lstm_out"], [p + "lstm_relu"]),
            helper.make_node("Gemm", [p + "lstm_relu", "head_w", "head_b"], [p + "logit"], transB=1),
            helper.make_node("Sigmoid", [p + "logit"], [p + "probability"]),
        ]
        return helper.make_graph(
            nodes, "branch_" + tag, [],
            [helper.make_tensor_value_info(p + "probability", TensorProto.FLOAT, [1, 1]),
             helper.make_tensor_value_info(p + "state_out", TensorProto.FLOAT, [2, 1, hidden])])

    then_branch = branch("16k", 256, 128, False)
    else_branch = branch("8k", 128, 64, True)
    const("rate_16k", 16000)
    nodes = [
        helper.make_node("Equal", ["sr", "rate_16k"], ["is_16k"]),
        helper.make_node("If", ["is_16k"], ["speech_probability", "state_out"],
                         then_branch=then_branch, else_branch=else_branch),
    ]
    graph = helper.make_graph(
        nodes, "vad_stream",
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 512]),
         helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, 1, hidden]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("speech_probability", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [2, 1, hidden])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="onnxlens-bench onnx.helper",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def write_overhead(name, path):
    """The per-run overhead models (onnx.helper): tiny tensors, so that the time is the engine's."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def value(n, shape, kind=TensorProto.FLOAT):
        return helper.make_tensor_value_info(n, kind, shape)

    inits = []
    if name == "overhead_add":
        nodes = [helper.make_node("Add", ["x", "y"], ["z"])]
        inputs, outputs = [value("x", [1, 16]), value("y", [1, 16])], [value("z", [1, 16])]
    elif name == "overhead_chain":
        inits = [numpy_helper.from_array(np.full((1, 64), 0.5, np.float32), "half")]
        nodes, last = [], "x"
        for i in range(32):
            op = ("Add", "Mul", "Relu", "Tanh")[i % 4]
            out = "v%d" % i
            nodes.append(helper.make_node(op, [last, "half"] if op in ("Add", "Mul") else [last], [out]))
            last = out
        nodes.append(helper.make_node("Identity", [last], ["z"]))
        inputs, outputs = [value("x", [1, 64])], [value("z", [1, 64])]
    elif name == "overhead_if":
        then_graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["a"])], "then", [],
                                       [value("a", [1, 16])])
        else_graph = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["m"])], "else", [],
                                       [value("m", [1, 16])])
        nodes = [helper.make_node("If", ["cond"], ["z"], then_branch=then_graph, else_branch=else_graph)]
        inputs = [value("cond", [], TensorProto.BOOL), value("x", [1, 16])]
        outputs = [value("z", [1, 16])]
    elif name == "overhead_loop":
        inits = [numpy_helper.from_array(np.array(16, np.int64), "trips"),
                 numpy_helper.from_array(np.array(True), "keep_going"),
                 numpy_helper.from_array(np.full((1, 16), 0.25, np.float32), "step")]
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Add", ["acc_in", "step"], ["acc_out"])],
            "body", [value("i", [], TensorProto.INT64), value("cond_in", [], TensorProto.BOOL),
                     value("acc_in", [1, 16])],
            [value("cond_out", [], TensorProto.BOOL), value("acc_out", [1, 16])])
        nodes = [helper.make_node("Loop", ["trips", "keep_going", "x"], ["z"], body=body)]
        inputs, outputs = [value("x", [1, 16])], [value("z", [1, 16])]
    else:
        raise SystemExit("unknown model " + name)
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="onnxlens-bench onnx.helper",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def make_inputs(name):
    """Seeded inputs for NAME: {input name: numpy array}."""
    rng = np.random.default_rng(2026)
    images = {"detector": (1, 3, 640, 640), "recognizer": (1, 3, 48, 320), "small_cnn": (1, 3, 48, 192)}
    if name in images:
        return {"image": rng.standard_normal(images[name]).astype(np.float32)}
    if name == "vad_stream":
        return {"audio": (0.1 * rng.standard_normal((1, 512))).astype(np.float32),
                "state": np.zeros((2, 1, 64), dtype=np.float32), "sr": np.array(16000, dtype=np.int64)}
    if name == "minilm_seq16":
        return {"input_ids": rng.integers(0, 30522, (1, 16)).astype(np.int64),
                "attention_mask": np.ones((1, 16), dtype=np.int64)}
    if name == "overhead_add":
        return {"x": rng.standard_normal((1, 16)).astype(np.float32),
                "y": rng.standard_normal((1, 16)).astype(np.float32)}
    if name == "overhead_chain":
        return {"x": rng.standard_normal((1, 64)).astype(np.float32)}
    if name == "overhead_if":
        return {"cond": np.array(True), "x": rng.standard_normal((1, 16)).astype(np.float32)}
    if name == "overhead_loop":
        return {"x": rng.standard_normal((1, 16)).astype(np.float32)}
    raise SystemExit("unknown model " + name)


def make(name, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if name == "vad_stream":
        write_vad_stream(path)
    elif name == "minilm_seq16":
        export_minilm(path)
    elif name in ("detector", "recognizer", "small_cnn"):
        export_torch(name, path)
    elif name.startswith("overhead_"):
        write_overhead(name, path)
    else:
        raise SystemExit("unknown model %s (one of %s)" % (name, ", ".join(NAMES)))


def main(argv):
    if len(argv) != 3 or argv[1] not in NAMES:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    make(argv[1], argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
