"""An export-test script that never finishes on its own (the exporter's time limit must stop it)."""
import time

import torch


def model():
    time.sleep(600)
    return torch.nn.Identity()


def example_inputs():
    return (torch.randn(1, 4),)
