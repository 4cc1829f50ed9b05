"""A stateful controller that keeps its hidden state on self, with the step checkpointed."""
import torch.nn as nn
import torch.utils.checkpoint


class Controller(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.cell = nn.GRUCell(d, d)
        self.hidden = None

    def _step(self, x):
        self.hidden = self.cell(x, self.hidden)
        return self.hidden

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self._step, x, use_reentrant=False)  # expect: SF403
