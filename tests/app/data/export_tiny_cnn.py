"""A small convolutional classifier for onnxlens's export tests (onnxlens_export.py --script)."""
import torch
import torch.nn as nn


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, 5)

    def forward(self, image):
        return torch.softmax(self.classifier(torch.flatten(self.features(image), 1)), dim=1)


def model():
    return TinyCnn()


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def input_names():
    return ["image"]


def output_names():
    return ["probabilities"]
