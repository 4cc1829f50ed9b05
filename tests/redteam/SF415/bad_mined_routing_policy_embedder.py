"""Mined (attention model for vehicle routing): forward checkpoints the graph embedder directly on the problem instance tensor."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class RoutingPolicy(nn.Module):
    def __init__(self, embedder, decoder, checkpoint_encoder=True):
        super().__init__()
        self.embedder = embedder
        self.decoder = decoder
        self.checkpoint_encoder = checkpoint_encoder

    def forward(self, instance):
        if self.checkpoint_encoder:
            embeddings = checkpoint(self.embedder, instance)  # expect: SF415
        else:
            embeddings = self.embedder(instance)
        return self.decoder(instance, embeddings)


def reinforce_epoch(policy, baseline, problems, optimizer):
    for instance in problems:
        cost, log_likelihood = policy(torch.as_tensor(instance))
        loss = ((cost - baseline(instance)) * log_likelihood).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
