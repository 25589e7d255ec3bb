"""A residual MLP whose third block computes otherwise while torch.onnx traces it than in eager
PyTorch (a planted difference): the exported model does not match PyTorch, and the first module
that diverges is blocks.2, at its residual Add; blocks.2.linear and blocks.2.act before it agree.
For onnxlens's module-by-module comparison of an export (onnxlens_export.py --script)."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, planted=False):
        super().__init__()
        self.linear = nn.Linear(16, 16)
        self.act = nn.Tanh()
        self.planted = planted

    def forward(self, x):
        y = self.act(self.linear(x))
        if self.planted and torch.onnx.is_in_onnx_export():
            y = y * 1.25  # only in the exported graph
        return y + x


class DivergingMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.blocks = nn.Sequential(Block(), Block(), Block(planted=True), Block())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


def model():
    return DivergingMlp()


def example_inputs():
    return (torch.randn(2, 8),)
