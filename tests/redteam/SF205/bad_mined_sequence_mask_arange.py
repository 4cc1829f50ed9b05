"""A d2l-style sequence mask helper called from a masked loss's forward: positions built on the host, then `.cuda()`."""
import torch
import torch.nn as nn


def sequence_mask(X, valid_len, value=0.0):
    width = X.size(1)
    mask = torch.arange(width).cuda()[None, :] < valid_len[:, None]  # expect: SF205
    X[~mask] = value
    return X


class MaskedCE(nn.CrossEntropyLoss):
    def forward(self, pred, label, valid_len):
        weights = sequence_mask(torch.ones_like(label, dtype=torch.float32), valid_len)
        self.reduction = "none"
        unweighted = super().forward(pred.permute(0, 2, 1), label)
        return (unweighted * weights).mean(dim=1)
