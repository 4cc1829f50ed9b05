"""Two wrapped networks saved as a tuple."""
import torch
from torch import nn


def save_pair(encoder, decoder, path):
    encoder = nn.DataParallel(encoder)
    decoder = nn.DataParallel(decoder)
    torch.save((encoder.state_dict(), decoder.state_dict()), path)  # expect: SF505
