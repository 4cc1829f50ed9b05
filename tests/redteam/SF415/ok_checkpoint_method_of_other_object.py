"""A model's own `.checkpoint(...)` method (saving weights), not torch's activation checkpointing."""
from torch.utils.data import DataLoader

for step, (x, y) in enumerate(DataLoader(ds)):
    loss = trainer.train_step(x, y)
    if step % 1000 == 0:
        trainer.checkpoint(x, step)
