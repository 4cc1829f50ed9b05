"""Mined (FSDP + TP example): seeded per-iteration input, a logging helper, backward and step with no clear."""
import logging

import torch

log = logging.getLogger(__name__)


def rank_log(rank, logger, msg):
    if rank == 0:
        logger.info(msg)


def run(sharded_model, rank, dp_rank, lr=3e-3, iterations=10, batch=2, seq=16, vocab=128):
    rank_log(rank, log, f"AdamW with lr {lr}")
    optimizer = torch.optim.AdamW(sharded_model.parameters(), lr=lr, foreach=True)
    for i in range(iterations):
        torch.manual_seed(i + dp_rank)
        tokens = torch.randint(vocab, (batch, seq))
        output = sharded_model(tokens)
        output.sum().backward()
        optimizer.step()  # expect: SF404
        rank_log(rank, log, f"iter {i} complete")
