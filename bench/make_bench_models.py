#!/usr/bin/python3
"""Makes the models and inputs of the ONNX Runtime comparison (bench/compare_ort.py).

usage: make_bench_models.py CACHE_DIR [MODEL...]

For each model (default: all) writes, when missing,
    CACHE_DIR/models/NAME/model.onnx      (big exports; small ones are read from the repository)
    CACHE_DIR/inputs/NAME/INPUT.npy       (the same seeded inputs feed both engines)
    CACHE_DIR/inputs/NAME/manifest.json   ({"model": path, "inputs": [{"name", "file"}...]})

Models:
  resnet50      torchvision ResNet-50, random seeded weights, opset 17, [1, 3, 224, 224]
  mobilenet_v2  torchvision MobileNetV2, random seeded weights, opset 17, [1, 3, 224, 224]
  bert_base     the BERT-base-shaped encoder of bench/make_bert_base.py, sequence 128
  lstm          resources/samples/lstm_classifier (PyTorch LSTM, hidden 32), batch 1
  bert_base_int8     bert_base quantized as ONNX Runtime's quantize_dynamic writes it
                     (`onnxlens-cli quantize --op-types MatMul`, or without the CLI
                     bench/make_dynamic_int8_model.py: int8 weights, DynamicQuantizeLinear ->
                     MatMulInteger -> Cast -> Mul)
  resnet50_int8      resnet50 by `onnxlens-cli quantize --op-types Conv,Gemm --format qdq`
  resnet50_int8_qop  resnet50 by `onnxlens-cli quantize --op-types Conv,MatMul,Gemm` (QOperator:
                     DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul [-> Add bias])
  mobilenet_v2_fp16, resnet50_fp16
                     float16 weights and activations (bench/make_float16_model.py), float16 inputs
  bert_base_ort_fused  a BERT-base encoder in the layout ONNX Runtime's transformer optimizer writes
                (bench/make_ort_fused_bert.py: EmbedLayerNormalization, Attention,
                SkipLayerNormalization, BiasGelu; seeded weights), sequence 128, 8 padded positions
  mobilenet_v2_qop   MobileNetV2's geometry in quantize_static's QOperator layout
                (bench/make_qoperator_mobilenet.py --full --per-channel --reduce-range: QLinearConv,
                QLinearAdd, QLinearGlobalAveragePool, QLinearMatMul; uint8 activations, 7-bit weights
                as quantize_static's reduce_range writes them for CPUs without VNNI, where ONNX
                Runtime's u8s8 products saturate otherwise), [1, 3, 224, 224]
  vad           bench/models/vad_helper.onnx: a voice-activity-detector-shaped model written
                with onnx.helper (not an exporter): STFT as a strided Conv, magnitude, two
                convolutions, one LSTM step carrying its state, a linear head. Regenerated with
                `make_bench_models.py --write-vad bench/models/vad_helper.onnx`.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

MODELS = ["resnet50", "mobilenet_v2", "bert_base", "lstm", "vad",
          "bert_base_int8", "resnet50_int8", "resnet50_int8_qop", "mobilenet_v2_fp16",
          "resnet50_fp16",
          "detector", "recognizer", "small_cnn", "vad_stream", "minilm_seq16",
          "bert_base_ort_fused", "mobilenet_v2_qop",
          "overhead_add", "overhead_chain", "overhead_if", "overhead_loop"]
# Variants made from a base model (issue 17): name -> (base, converter). A converter is a script
# of bench/ (IN OUT) or, for "quantize ARGS", `onnxlens-cli quantize IN OUT ARGS` with the CLI in
# CLI (compare_ort.py sets it); without a CLI the int8 BERT falls back to the script.
VARIANTS = {
    "bert_base_int8": ("bert_base", "quantize --op-types MatMul"),
    "resnet50_int8": ("resnet50", "quantize --op-types Conv,Gemm --format qdq"),
    "resnet50_int8_qop": ("resnet50", "quantize --op-types Conv,MatMul,Gemm"),
    "mobilenet_v2_fp16": ("mobilenet_v2", "make_float16_model.py"),
    "resnet50_fp16": ("resnet50", "make_float16_model.py"),
}
CLI = os.environ.get("ONNXLENS_CLI")
sys.path.insert(0, HERE)
import make_speed_models  # noqa: E402  (the speed round's models, issue 22)


def export_torchvision(name, path):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, input_names=["image"], output_names=["logits"],
                          opset_version=17)


def write_vad(path):
    """A Silero-VAD-shaped network in plain onnx.helper calls (another producer than PyTorch)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    window, hop, bins, hidden = 256, 128, 129, 64

    def weight(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    # A real STFT basis (cos and sin rows, Hann window) so that the magnitude means something.
    n = np.arange(window)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / window)
    k = np.arange(bins)[:, None]
    basis = np.concatenate([np.cos(2 * np.pi * k * n / window) * hann,
                            -np.sin(2 * np.pi * k * n / window) * hann]).astype(np.float32)
    inits = [
        numpy_helper.from_array(basis.reshape(2 * bins, 1, window), "stft_basis"),
        numpy_helper.from_array(np.array([1, 1, -1], dtype=np.int64), "audio_shape"),
        numpy_helper.from_array(np.array([bins, bins], dtype=np.int64), "split_sizes"),
        weight("enc1_w", (hidden, bins, 3), 0.05), weight("enc1_b", (hidden,), 0.1),
        weight("enc2_w", (hidden, hidden, 3), 0.07), weight("enc2_b", (hidden,), 0.1),
        weight("lstm_w", (1, 4 * hidden, hidden), 0.1), weight("lstm_r", (1, 4 * hidden, hidden), 0.1),
        weight("lstm_b", (1, 8 * hidden), 0.1),
        weight("head_w", (1, hidden), 0.2), weight("head_b", (1,), 0.1),
        numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "squeeze_axes"),
    ]
    nodes = [
        helper.make_node("Reshape", ["audio", "audio_shape"], ["audio_3d"]),
        helper.make_node("Conv", ["audio_3d", "stft_basis"], ["spectrum"], strides=[hop]),
        helper.make_node("Split", ["spectrum", "split_sizes"], ["real", "imag"], axis=1),
        helper.make_node("Mul", ["real", "real"], ["real_sq"]),
        helper.make_node("Mul", ["imag", "imag"], ["imag_sq"]),
        helper.make_node("Add", ["real_sq", "imag_sq"], ["power"]),
        helper.make_node("Sqrt", ["power"], ["magnitude"]),
        helper.make_node("Conv", ["magnitude", "enc1_w", "enc1_b"], ["enc1"], pads=[1, 1]),
        helper.make_node("Relu", ["enc1"], ["enc1_relu"]),
        helper.make_node("Conv", ["enc1_relu", "enc2_w", "enc2_b"], ["enc2"], pads=[1, 1], strides=[2]),
        helper.make_node("Relu", ["enc2"], ["enc2_relu"]),
        helper.make_node("ReduceMean", ["enc2_relu"], ["pooled"], axes=[2], keepdims=1),
        helper.make_node("Transpose", ["pooled"], ["step"], perm=[2, 0, 1]),
        helper.make_node("LSTM", ["step", "lstm_w", "lstm_r", "lstm_b", "", "h", "c"],
                         ["lstm_y", "hn", "cn"], hidden_size=hidden),
        helper.make_node("Squeeze", ["lstm_y", "squeeze_axes"], ["lstm_out"]),
        helper.make_node("Relu", ["lstm_out"], ["lstm_relu"]),
        helper.make_node("Gemm", ["lstm_relu", "head_w", "head_b"], ["logit"], transB=1),
        helper.make_node("Sigmoid", ["logit"], ["speech_probability"]),
    ]
    graph = helper.make_graph(
        nodes, "vad_helper",
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 512]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 1, hidden])],
        [helper.make_tensor_value_info("speech_probability", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("hn", TensorProto.FLOAT, [1, 1, hidden]),
         helper.make_tensor_value_info("cn", TensorProto.FLOAT, [1, 1, hidden])],
        initializer=inits)
    # ReduceMean takes axes as an attribute up to opset 17.
    model = helper.make_model(graph, producer_name="onnxlens-bench onnx.helper",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(model, path)


def model_path(cache, name):
    if name == "lstm":
        return os.path.join(REPO, "resources", "samples", "lstm_classifier", "model.onnx")
    if name == "vad":
        return os.path.join(HERE, "models", "vad_helper.onnx")
    return os.path.join(cache, "models", name, "model.onnx")


def make_model(cache, name):
    path = model_path(cache, name)
    if os.path.exists(path):
        return path
    if name in VARIANTS:
        base, script = VARIANTS[name]
        source = make_model(cache, base)
        print("making %s ..." % path, file=sys.stderr, flush=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if script.startswith("quantize") and CLI and os.path.exists(CLI):
            subprocess.run([CLI, "quantize", source, path] + script.split()[1:], check=True,
                           stdout=subprocess.DEVNULL)
        elif name == "bert_base_int8" or not script.startswith("quantize"):
            script = script if not script.startswith("quantize") else "make_dynamic_int8_model.py"
            subprocess.run([sys.executable, os.path.join(HERE, script), source, path], check=True)
        else:
            raise SystemExit("%s: needs onnxlens-cli quantize (set ONNXLENS_CLI)" % name)
        return path
    print("making %s ..." % path, file=sys.stderr, flush=True)
    if name in ("resnet50", "mobilenet_v2"):
        export_torchvision(name, path)
    elif name == "bert_base":
        subprocess.run([sys.executable, os.path.join(HERE, "make_bert_base.py"), os.path.dirname(path)],
                       check=True)
    elif name == "vad":
        write_vad(path)
    elif name == "bert_base_ort_fused":
        subprocess.run([sys.executable, os.path.join(HERE, "make_ort_fused_bert.py"), os.path.dirname(path)],
                       check=True, stdout=subprocess.DEVNULL)
    elif name == "mobilenet_v2_qop":
        folder = os.path.dirname(path)
        subprocess.run([sys.executable, os.path.join(HERE, "make_qoperator_mobilenet.py"), folder, "--full",
                        "--per-channel", "--reduce-range"], check=True, stdout=subprocess.DEVNULL)
        os.replace(os.path.join(folder, "qoperator_mobilenet.onnx"), path)
    elif name in make_speed_models.NAMES:
        make_speed_models.make(name, path)
    else:
        raise SystemExit("%s: missing (it is part of the repository)" % path)
    return path


def make_inputs(name):
    if name in VARIANTS:
        inputs = make_inputs(VARIANTS[name][0])
        if name.endswith("_fp16"):
            inputs = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in inputs.items()}
        return inputs
    if name in make_speed_models.NAMES:
        return make_speed_models.make_inputs(name)
    rng = np.random.default_rng(2026)
    if name in ("resnet50", "mobilenet_v2"):
        return {"image": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
    if name == "bert_base":
        return {"input_ids": rng.integers(0, 30522, (1, 128)).astype(np.int64),
                "attention_mask": np.ones((1, 128), dtype=np.int64)}
    if name == "bert_base_ort_fused":
        import make_ort_fused_bert  # noqa: E402
        return make_ort_fused_bert.make_inputs(argparse.Namespace(seed=0, sequence=128, vocab=30522))
    if name == "mobilenet_v2_qop":
        return {"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)}
    if name == "lstm":
        return {"sequence": rng.standard_normal((1, 10, 16)).astype(np.float32)}
    if name == "vad":
        return {"audio": (0.1 * rng.standard_normal((1, 512))).astype(np.float32),
                "h": np.zeros((1, 1, 64), dtype=np.float32), "c": np.zeros((1, 1, 64), dtype=np.float32)}
    raise SystemExit("unknown model " + name)


def prepare(cache, name):
    model = make_model(cache, name)
    folder = os.path.join(cache, "inputs", name)
    os.makedirs(folder, exist_ok=True)
    entries = []
    for input_name, array in make_inputs(name).items():
        file = os.path.join(folder, input_name + ".npy")
        np.save(file, np.asarray(array, order="C"))  # keeps rank 0 (ascontiguousarray makes it 1-D)
        entries.append({"name": input_name, "file": file})
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w") as f:
        json.dump({"model": model, "inputs": entries}, f, indent=1)
    return manifest


def main(argv):
    if len(argv) == 3 and argv[1] == "--write-vad":
        write_vad(argv[2])
        return 0
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cache = argv[1]
    for name in argv[2:] or MODELS:
        if name not in MODELS:
            print("unknown model %s (known: %s)" % (name, ", ".join(MODELS)), file=sys.stderr)
            return 2
        print(prepare(cache, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
