"""Mined shape: a map-style dataset of the project crops a multi-band tile for each grid cell and turns the cell's
population shares into the regression label with `torch.tensor(..., requires_grad=True)`, cast and moved in the same
expression; the training loop lives in another module and feeds the label to MSELoss (bad: nothing reads its
gradient; every batch builds a stacked graph for it)."""
import numpy as np
import torch
from torch.utils.data import Dataset


class CellTiles(Dataset):
    def __init__(self, frame, tile_reader, with_targets=True):
        self.frame = frame
        self.tile_reader = tile_reader
        self.with_targets = with_targets
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, index):
        row = self.frame.iloc[index]
        tile = torch.tensor(self.tile_reader(row)).to(self.device)
        if not self.with_targets:
            return tile
        shares = np.maximum(np.log(np.asarray(row["shares"], dtype=np.float64)), 0)
        share_t = torch.tensor(shares, requires_grad=True).float().to(self.device)
        return tile, share_t
