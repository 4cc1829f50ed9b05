"""Mined shape: a dataset for a memory-term surrogate model converts its whole design matrix and response to tensors
with `requires_grad=True` once in `__init__`, and `__getitem__` hands back a row and the reshaped response; a loop over
an enumerated DataLoader fits the network with MSE (bad: nothing reads the response's gradient)."""
import torch
from torch.utils.data import DataLoader, Dataset


class LaggedWindows(Dataset):
    def __init__(self, windows, responses):
        self.windows = torch.tensor(windows, requires_grad=True)
        self.responses = torch.tensor(responses, requires_grad=True)

    def __len__(self):
        assert self.windows.shape[0] == len(self.responses)
        return len(self.responses)

    def __getitem__(self, k):
        return self.windows[k, :], self.responses[k].reshape(-1, 1)


def train_surrogate(net, windows, responses, epochs=100, lr=1e-3):
    batches = DataLoader(LaggedWindows(windows, responses), batch_size=64, shuffle=True)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    mse = torch.nn.MSELoss()
    for epoch in range(epochs):
        for step, (w, r) in enumerate(batches):
            opt.zero_grad()
            err = mse(net(w.double()), r)  # expect: SF101
            err.backward()
            opt.step()
