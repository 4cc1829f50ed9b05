"""Mined (test-time adaptation pool): `update_coefficients` builds an Adam over the mixing coefficients each time a vector is inserted."""
import torch


class CoefficientPool:
    def __init__(self, model, base_state, n_slots):
        self.model = model
        self.base = base_state
        self.coefficients = [torch.zeros(n_slots, requires_grad=True)]

    def mixed_logits(self, x):
        return self.model(x) * self.coefficients[0].sum()

    def update_coefficients(self, batch):
        opt = torch.optim.Adam(params=self.coefficients, lr=0.001)  # expect: SF408
        opt.zero_grad()
        probs = self.mixed_logits(batch).softmax(-1)
        loss = -(probs * probs.clamp_min(1e-8).log()).sum(-1).mean()
        loss.backward()
        opt.step()

    def adapt(self, stream):
        for batch in stream:
            self.update_coefficients(batch)
