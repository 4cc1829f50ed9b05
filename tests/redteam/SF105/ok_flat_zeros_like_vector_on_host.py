"""Near miss: the flat sum is allocated on the host and each batch's concatenated gradient is moved there before the
add (legitimate)."""
import torch
from torch.nn.utils import parameters_to_vector


class GradientMatcher:
    def __init__(self, model, loss, device):
        self.model = model
        self.loss = loss
        self.device = device

    def mean_gradient(self, loader):
        flat = parameters_to_vector(p for p in self.model.parameters() if p.requires_grad)
        pm = torch.zeros_like(flat, device="cpu")
        for x, y in loader:
            self.model.zero_grad()
            self.loss(self.model(x.to(self.device)), y.to(self.device)).backward()
            pm += torch.cat([p.grad.view(-1) for p in self.model.parameters() if p.requires_grad]).cpu()
        return (pm / len(loader)).norm().item()
