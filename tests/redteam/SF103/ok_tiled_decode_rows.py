"""Tiled VAE decoding: decoder outputs per tile are collected in lists and concatenated into the result."""
import torch
from torch import nn


class TiledDecoder(nn.Module):
    def __init__(self, decoder, tile):
        super().__init__()
        self.decoder = decoder
        self.tile = tile

    def tiled_decode(self, z):
        rows = []
        for i in range(0, z.shape[-2], self.tile):
            row = []
            for j in range(0, z.shape[-1], self.tile):
                decoded = self.decoder(z[..., i:i + self.tile, j:j + self.tile])
                row.append(decoded)
            rows.append(torch.cat(row, dim=-1))
        return torch.cat(rows, dim=-2)
