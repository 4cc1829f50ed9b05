"""Near miss: a conditional critic of the file (it builds a layer) scores a generated sample detached
from the generator, as a critic's update does; the critic is a model trained here, not a loss whose
prediction was cut."""
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self, width: int, classes: int) -> None:
        super().__init__()
        self.body = nn.Linear(width + classes, 1)

    def forward(self, sample, condition):
        return self.body(torch.cat([sample, condition], dim=1))


def critic_step(generator, critic, noise, real, condition, optimizer):
    fake = generator(noise).detach().requires_grad_(True)
    value = critic(fake, condition).mean() - critic(real, condition).mean()
    optimizer.zero_grad()
    value.backward()
    optimizer.step()
