"""Only the optimizer and scheduler state are saved next to a wrapped model."""
import torch
import torch.nn as nn


def save(model, optimizer, scheduler, path):
    model = nn.DataParallel(model)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, path)
    return model
