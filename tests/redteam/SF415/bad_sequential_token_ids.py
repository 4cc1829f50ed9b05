"""checkpoint_sequential over a Sequential whose first module is the embedding, fed integer token ids."""
import torch
from torch.utils.checkpoint import checkpoint_sequential


def lm_forward(seq_model, batch):
    ids = batch["input_ids"].long()
    return checkpoint_sequential(seq_model, 2, ids)  # expect: SF415
