"""Mined shape: `if os.path.isfile(args.resume)`: torch.load without map_location, then epoch, model and optimizer restored from the one dict (bad)."""
import os

import torch


def maybe_resume(args, model, optimizer):
    if os.path.isfile(args.resume):
        print(f"=> loading checkpoint '{args.resume}'")
        checkpoint = torch.load(args.resume)  # expect: SF107
        args.start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
