"""Near miss of bad_mined_dataset_item_label_to_device: the dataset makes the *inputs* require grad (a physics
residual differentiates the network output with respect to them); the label is plain (legitimate)."""
import torch
from torch.utils.data import DataLoader, Dataset


class Collocation(Dataset):
    def __init__(self, points, values):
        self.points, self.values = points, values

    def __len__(self):
        return len(self.points)

    def __getitem__(self, k):
        p = torch.tensor(self.points[k], dtype=torch.float32, requires_grad=True)
        v = torch.tensor(self.values[k], dtype=torch.float32)
        return p, v


def fit(net, points, values, epochs=10):
    loader = DataLoader(Collocation(points, values), batch_size=128)
    opt = torch.optim.Adam(net.parameters())
    fit_loss = torch.nn.MSELoss()
    for _ in range(epochs):
        for p, v in loader:
            opt.zero_grad()
            fit_loss(net(p), v).backward()
            opt.step()
