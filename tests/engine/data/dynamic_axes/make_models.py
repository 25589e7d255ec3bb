#!/usr/bin/python3
"""Makes the small PyTorch exports the dynamic-axes tests run (tests/engine/DynamicAxesCheckTest.cpp).

  bert_type_embedding.onnx  a BERT-style encoder: word, position and a 2-row token-type embedding,
                            one attention layer; inputs input_ids, attention_mask, token_type_ids
                            with dynamic batch and sequence
  text_recognizer.onnx      a CNN + LSTM text recognizer: image [batch, 1, 32, width]; the CNN
                            divides the width by 4 and a Reshape pairs columns, so the width must be
                            a multiple of 8 (4 and 5 are rejected, 16 and 32 are accepted)
  fixed_batch.onnx          traced with x.view(1, -1): the batch is baked into a Reshape although
                            dynamic_axes declares it

Run with a Python that has torch (Debian's python3-torch): /usr/bin/python3 make_models.py
"""
import os

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class TinyBert(nn.Module):
    def __init__(self, vocab=30, hidden=8, positions=16):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.register_buffer("position_ids", torch.arange(positions).unsqueeze(0))

    def forward(self, input_ids, attention_mask, token_type_ids):
        sequence = input_ids.shape[1]
        x = self.words(input_ids) + self.positions(self.position_ids[:, :sequence]) + self.types(token_type_ids)
        x = self.norm(x)
        scores = torch.matmul(self.query(x), self.key(x).transpose(1, 2)) / (x.shape[-1] ** 0.5)
        scores = scores + (1.0 - attention_mask[:, None, :].float()) * -10000.0
        return torch.matmul(torch.softmax(scores, dim=-1), self.value(x))


class TextRecognizer(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.lstm = nn.LSTM(64, 16)
        self.classify = nn.Linear(16, classes)

    def forward(self, image):
        x = self.cnn(image)  # [batch, 8, 8, width / 4]
        x = x.flatten(1, 2)  # [batch, 64, width / 4]
        x = x.reshape(x.shape[0], 64, -1, 2).mean(-1)  # pairs of columns: [batch, 64, width / 8]
        x = x.permute(2, 0, 1)  # [time, batch, 64]
        y, _ = self.lstm(x)
        return self.classify(y)  # [time, batch, classes]


class FixedBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(12, 3)

    def forward(self, x):
        return self.linear(x.view(1, -1)).view(-1, 3)


def export(module, inputs, name, input_names, output_names, axes):
    torch.onnx.export(module.eval(), inputs, os.path.join(HERE, name), opset_version=13,
                      do_constant_folding=True, input_names=input_names, output_names=output_names,
                      dynamic_axes=axes)


def main():
    torch.manual_seed(0)
    text_axes = {0: "batch", 1: "sequence"}
    ids = torch.randint(0, 30, (1, 6))
    export(TinyBert(), (ids, torch.ones(1, 6, dtype=torch.int64), torch.zeros(1, 6, dtype=torch.int64)),
           "bert_type_embedding.onnx", ["input_ids", "attention_mask", "token_type_ids"],
           ["last_hidden_state"], {"input_ids": text_axes, "attention_mask": text_axes,
                                   "token_type_ids": text_axes, "last_hidden_state": text_axes})
    export(TextRecognizer(), (torch.randn(1, 1, 32, 32),), "text_recognizer.onnx", ["image"], ["logits"],
           {"image": {0: "batch", 3: "width"}, "logits": {0: "time", 1: "batch"}})
    export(FixedBatch(), (torch.randn(1, 12),), "fixed_batch.onnx", ["x"], ["y"],
           {"x": {0: "batch"}, "y": {0: "batch"}})


if __name__ == "__main__":
    main()
