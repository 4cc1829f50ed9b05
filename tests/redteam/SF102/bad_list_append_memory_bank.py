"""Contrastive trainer appends every batch's detached key embeddings to a list on self and concatenates it as negatives; the list is never trimmed (bad)."""
import torch
import torch.nn.functional as F


class NegativeBankTrainer:
    def __init__(self, encoder, key_encoder, optimizer, tau=0.07):
        self.encoder = encoder
        self.key_encoder = key_encoder
        self.optimizer = optimizer
        self.tau = tau
        self.negatives = []

    def train_step(self, x_q, x_k):
        q = F.normalize(self.encoder(x_q), dim=1)
        with torch.no_grad():
            k = F.normalize(self.key_encoder(x_k), dim=1)
        bank = torch.cat([k] + self.negatives) if self.negatives else k
        logits = q @ bank.T / self.tau
        loss = F.cross_entropy(logits, torch.arange(q.size(0), device=q.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.negatives.append(k.detach())  # expect: SF102
        return loss.item()
