"""accelerate loop calling a user EnergyLoss module with the prediction, a reference aliased to the source, and the source (bad)."""
import torch
from accelerate import Accelerator


class EnergyLoss(torch.nn.Module):
    def forward(self, pred, ref, src):
        return (pred - ref).pow(2).mean() + 0.5 * (pred - src).abs().mean()


def main(model, loader, optimizer):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    energy = EnergyLoss()
    for x_src, _style in loader:
        x_ref = x_src.to(accelerator.device)
        pred = model(x_src)
        loss = energy(pred, x_ref, x_src)  # expect: SF401
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
