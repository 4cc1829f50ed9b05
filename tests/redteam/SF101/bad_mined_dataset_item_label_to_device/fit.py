"""The training half: a DataLoader over the project dataset feeds each batch's shares to MSELoss."""
import torch
from torch.utils.data import DataLoader

from .census_data import CellTiles


def fit(net, frame, tile_reader, epochs=5):
    loader = DataLoader(CellTiles(frame, tile_reader), batch_size=16, shuffle=True)
    objective = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
    for _ in range(epochs):
        for tiles, shares in loader:
            optimizer.zero_grad()
            error = objective(net(tiles), shares)  # expect: SF101
            error.backward()
            optimizer.step()
