"""An export-test model using an operator torch.onnx cannot export (aten::special_erfcx)."""
import torch


class ScaledErfcx(torch.nn.Module):
    def forward(self, x):
        return torch.special.erfcx(x) * 2.0


def model():
    return ScaledErfcx()


def example_inputs():
    return (torch.randn(1, 4),)
