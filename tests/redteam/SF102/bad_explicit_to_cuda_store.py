"""Retrieval trainer: passage embeddings are detached and explicitly moved `.to("cuda")` before being memoised per passage id (bad)."""
import torch
import torch.nn.functional as F


class DenseRetrieverTrainer:
    def __init__(self, q_enc, p_enc, optimizer):
        self.q_enc = q_enc
        self.p_enc = p_enc
        self.optimizer = optimizer
        self.passage_cache = {}

    def step(self, queries, passages, passage_ids):
        q = self.q_enc(queries)
        with torch.no_grad():
            p = self.p_enc(passages)
        for pid, emb in zip(passage_ids, p):
            self.passage_cache[pid] = emb.detach().to("cuda")  # expect: SF102
        scores = q @ p.T
        loss = F.cross_entropy(scores, torch.arange(len(q), device=q.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
