"""A same-file helper builds the wrapper; the caller saves its state dict."""
import torch
import torch.nn as nn


def build(num_classes, gpus):
    backbone = nn.Sequential(nn.Flatten(), nn.Linear(784, num_classes))
    return nn.DataParallel(backbone, device_ids=gpus)


def main(gpus):
    classifier = build(10, gpus)
    torch.save(classifier.state_dict(), "classifier.pth")  # expect: SF505
