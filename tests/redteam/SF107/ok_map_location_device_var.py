"""map_location set to the rank's own device."""
import torch


def resume(model, optimizer, path, local_rank):
    device = torch.device("cuda", local_rank)
    ckpt = torch.load(path, map_location=device)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
