"""Mined shape: model moved to 'cuda', then resumed weights and best accuracy come from torch.load without map_location (bad)."""
import os

import torch


def setup(args, model):
    model.to("cuda")
    best_prec = 0.0
    if args.resume:
        if os.path.isfile(args.resume):
            snap = torch.load(args.resume)  # expect: SF107
            args.start_epoch = snap["epoch"]
            best_prec = snap["best_prec1"]
            model.load_state_dict(snap["state_dict"])
        else:
            print("no checkpoint at", args.resume)
    return best_prec
