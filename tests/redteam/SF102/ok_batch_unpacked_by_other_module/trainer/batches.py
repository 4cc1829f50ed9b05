"""Batch helpers shared by the trainers: split a collated batch into its fields."""


def split_batch(batch):
    return batch["pixels"], batch["ids"]
