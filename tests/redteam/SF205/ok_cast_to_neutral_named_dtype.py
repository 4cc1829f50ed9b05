"""A mask built in `forward` and cast with `.to(precision)`, where the module binds `precision` to a torch dtype:
a cast where the tensor was built, not a move to a device, whatever the dtype is called (near miss)."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim, fast):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.precision = torch.bfloat16 if fast else torch.float32

    def forward(self, x):
        keep = torch.ones(x.size(-1)).to(self.precision)
        return self.lin(x.to(self.precision)) * keep
