"""Mined (TextCNN classifier): one convolution per window size, kept in a plain list comprehension."""
import torch
import torch.nn as nn


class TextCNN(nn.Module):
    def __init__(self, vocab, emb, channels, windows, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.convs = [nn.Conv2d(1, channels, kernel_size=(w, emb)) for w in windows]  # expect: SF413
        self.pool = nn.AdaptiveMaxPool2d((1, 1))
        self.out = nn.Linear(len(windows) * channels, classes)

    def forward(self, ids):
        x = self.embed(ids).unsqueeze(1)
        feats = [self.pool(conv(x)).flatten(1) for conv in self.convs]
        return self.out(torch.cat(feats, 1))
