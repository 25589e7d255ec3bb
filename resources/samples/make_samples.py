#!/usr/bin/python3
"""Exports the sample models bundled with onnxlens, each in its own folder with model.onnx and
test_data_set_N folders (inputs and PyTorch's outputs as TensorProto .pb files).

Weights are random but seeded, so a rerun gives the same models. Needs torch and torchvision
(Debian: python3-torch python3-torchvision); the outputs are committed, CI does not run this.

usage: make_samples.py [OUT_DIR]   (default: the folder of this script)
"""
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class MnistCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, image):
        x = F.max_pool2d(F.relu(self.conv1(image)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size) + mask_bias
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        batch, _, seq, _ = context.shape
        context = context.permute(0, 2, 1, 3).reshape(batch, seq, self.heads * self.head_size)
        return self.output(context)


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.attention_norm(x + self.attention(x, mask_bias))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    """A BERT-style encoder: word + position + token-type embeddings, post-norm layers, pooler."""

    def __init__(self, vocab=1000, hidden=64, layers=2, heads=4, intermediate=256, max_positions=128):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([EncoderLayer(hidden, heads, intermediate) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + \
            self.token_type_embeddings(torch.zeros_like(input_ids))
        x = self.embedding_norm(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


class LstmClassifier(nn.Module):
    def __init__(self, features=16, hidden=32, classes=4):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, sequence):
        outputs, (hidden, _) = self.lstm(sequence)
        return self.head(hidden[-1])


class LegacyUpsampler(nn.Module):
    """Ops as opset 9-11 exporters wrote them: Upsample/Resize, HardSigmoid, ConvTranspose, BN."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.BatchNorm2d(8)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.deconv = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
        self.norm2 = nn.BatchNorm2d(4)

    def forward(self, image):
        x = F.hardsigmoid(self.norm(self.conv(image)))
        x = self.deconv(self.up(x))
        return torch.relu(self.norm2(x))


def randomize_norm_statistics(model, generator):
    # Fresh BatchNorm layers have mean 0 / var 1, which would hide a wrong normalization.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=generator) + 0.5)


def save_data_set(folder, index, names, inputs, outputs):
    data_dir = os.path.join(folder, "test_data_set_%d" % index)
    os.makedirs(data_dir, exist_ok=True)
    for k, (name, value) in enumerate(zip(names, inputs)):
        tensor = onnx.numpy_helper.from_array(value.numpy(), name)
        with open(os.path.join(data_dir, "input_%d.pb" % k), "wb") as f:
            f.write(tensor.SerializeToString())
    for k, value in enumerate(outputs):
        tensor = onnx.numpy_helper.from_array(value.detach().numpy(), "output_%d" % k)
        with open(os.path.join(data_dir, "output_%d.pb" % k), "wb") as f:
            f.write(tensor.SerializeToString())


def export(out_dir, name, model, input_sets, input_names, output_names, dynamic_axes, opset,
           **export_args):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    model.eval()
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(input_sets[0]), path, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes,
                          opset_version=opset, **export_args)
        for index, inputs in enumerate(input_sets):
            outputs = model(*inputs)
            if not isinstance(outputs, (tuple, list)):
                outputs = [outputs]
            save_data_set(folder, index, input_names, inputs, outputs)
    onnx.checker.check_model(onnx.load(path))
    print("%-16s %8.1f KB" % (name, os.path.getsize(path) / 1024))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)

    export(out_dir, "mnist_cnn", MnistCnn(),
           [[torch.rand(1, 1, 28, 28, generator=g)], [torch.rand(2, 1, 28, 28, generator=g)]],
           ["image"], ["log_probs"], {"image": {0: "batch"}, "log_probs": {0: "batch"}}, 13)

    bert = BertEncoder()
    def bert_inputs(batch, seq):
        ids = torch.randint(0, 1000, (batch, seq), generator=g)
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[:, seq - 2:] = 0  # padding at the end, masked out
        return [ids, mask]
    export(out_dir, "tiny_bert", bert, [bert_inputs(1, 16), bert_inputs(2, 9)],
           ["input_ids", "attention_mask"], ["last_hidden_state", "pooled_output"],
           {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}, "pooled_output": {0: "batch"}}, 14)

    export(out_dir, "lstm_classifier", LstmClassifier(),
           [[torch.randn(1, 10, 16, generator=g)], [torch.randn(2, 10, 16, generator=g)]],
           ["sequence"], ["logits"], {"sequence": {0: "batch"}, "logits": {0: "batch"}}, 13)

    legacy = LegacyUpsampler()
    randomize_norm_statistics(legacy, g)
    export(out_dir, "legacy_opset10", legacy, [[torch.rand(1, 3, 16, 16, generator=g)]],
           ["image"], ["features"], None, 10,
           do_constant_folding=False, training=torch.onnx.TrainingMode.EVAL)

    import torchvision
    squeezenet = torchvision.models.squeezenet1_1(weights=None)
    export(out_dir, "squeezenet1_1", squeezenet,
           [[torch.rand(1, 3, 224, 224, generator=g)], [torch.rand(2, 3, 224, 224, generator=g)]],
           ["image"], ["logits"], {"image": {0: "batch"}, "logits": {0: "batch"}}, 13)


if __name__ == "__main__":
    main()
