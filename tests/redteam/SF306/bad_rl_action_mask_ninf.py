"""An RL policy masks illegal actions with -np.inf before log_softmax; a state with no legal action gives NaN."""
import numpy as np
import torch


class MaskedPolicy(torch.nn.Module):
    def forward(self, obs, legal):
        logits = self.net(obs)
        logits = logits.masked_fill(~legal, -np.inf)  # expect: SF306
        return torch.log_softmax(logits, dim=-1)
