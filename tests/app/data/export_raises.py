"""An export-test script whose model() raises, as a user's broken script would."""
import torch


def model():
    raise ValueError("the checkpoint path is not set")


def example_inputs():
    return (torch.randn(1, 4),)
