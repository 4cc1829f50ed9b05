"""Mined (a 3D-CNN trained on streamed video shards): the network is cast to half at construction and trained with Adam."""
import torch
import torch.nn as nn


def train(shards, epochs, device="cuda"):
    net = Video3DNet(classes=10).to(device).half()  # expect: SF305
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    ce = nn.CrossEntropyLoss()
    net.train()
    for epoch in range(epochs):
        for clips, labels in stream_loader(shards):
            logits = net(clips.to(device).half())
            loss = ce(logits, labels.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
