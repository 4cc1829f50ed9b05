"""Mined shape: a decoder-training script turns anomaly detection on at module level, then trains inside `if args.training:` (bad)."""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument("--training", action="store_true")
parser.add_argument("--steps", type=int, default=100)
args = parser.parse_args()

decoder = nn.Linear(16, 16)
torch.autograd.set_detect_anomaly(True)  # expect: SF203

if args.training:
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.Adam(decoder.parameters(), lr=1e-3)
    for step in range(args.steps):
        received = torch.randn(32, 16)
        bits = (torch.rand(32, 16) > 0.5).float()
        loss = criterion(decoder(received), bits)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
