"""Mined shape: a feature-extraction script moves the encoder to the device and then, when --resume is set, loads the saved state dict without map_location (bad)."""
import torch
from torch import nn


def build_encoder(args, device):
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=64, nhead=4), num_layers=2)
    encoder.to(device)
    if args.resume:
        print("resuming from", args.resume)
        saved = torch.load(args.resume)  # expect: SF107
        encoder.load_state_dict(saved["state_dict"])
    encoder.eval()
    return encoder
