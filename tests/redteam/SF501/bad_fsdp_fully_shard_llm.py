"""FSDP2 (`fully_shard`) language-model pretraining with a shuffling loader and no sampler."""
import os

import torch
from torch.distributed import init_process_group
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader


def train(model_factory, token_dataset, steps_per_epoch, epochs):
    init_process_group("nccl")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    model = model_factory().to(device)
    for block in model.layers:
        fully_shard(block)
    fully_shard(model)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = DataLoader(token_dataset, batch_size=8, shuffle=True, drop_last=True)  # expect: SF501
    for _ in range(epochs):
        for step, tokens in enumerate(batches):
            tokens = tokens.to(device)
            logits = model(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
            loss.backward()
            optim.step()
            optim.zero_grad()
