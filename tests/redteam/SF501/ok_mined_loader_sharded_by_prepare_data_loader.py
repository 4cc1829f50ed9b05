"""Mined (accelerate's own test scripts): the shuffled loader is handed to accelerate's `prepare_data_loader`, which
hands back a loader that draws each process's shard; only that one is looped over."""
from accelerate import Accelerator
from accelerate.data_loader import prepare_data_loader as shard_loader
from torch.utils.data import DataLoader


def train(model, optimizer, dataset):
    accelerator = Accelerator()
    model, optimizer = accelerator.prepare(model, optimizer)
    plain = DataLoader(dataset, batch_size=8, shuffle=True)
    sharded = shard_loader(
        dataloader=plain,
        num_processes=accelerator.num_processes,
        process_index=accelerator.process_index,
    )
    for batch in sharded:
        accelerator.backward(model(batch).sum())
        optimizer.step()
        optimizer.zero_grad()
