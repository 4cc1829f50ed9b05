"""Mined shape: a module-level `for epoch in range(1, 501)` loop calls train() and test(); test() switches the global GNN to eval and forwards (x, edge_index, batch) with autograd on (bad)."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class PoolNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(7, 2)

    def forward(self, x, edge_index, batch):
        return self.lin(x).mean(0, keepdim=True)


model = PoolNet().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
train_loader, test_loader = [], []


def train():
    model.train()
    for data in train_loader:
        data = data.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(data.x, data.edge_index, data.batch), data.y)
        loss.backward()
        optimizer.step()


def test(loader):
    model.eval()
    correct = 0
    for data in loader:
        data = data.to(device)
        out = model(data.x, data.edge_index, data.batch)  # expect: SF106
        correct += (out.argmax(dim=1) == data.y).sum().item()
    return correct / max(len(loader), 1)


for epoch in range(1, 501):
    train()
    acc = test(test_loader)
