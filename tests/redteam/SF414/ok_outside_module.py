"""Functional dropout as a data augmentation in a plain function and in a dataset transform."""
import torch.nn.functional as F


def token_dropout(embeddings, p=0.1):
    return F.dropout(embeddings, p)


class Augment:
    def __call__(self, x):
        return F.dropout(x, 0.05)
