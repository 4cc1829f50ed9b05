"""Mined shape: a video model wrapped in DataParallel(...).cuda() runs a layout helper, then resumes model and optimizer from torch.load without map_location (bad)."""
import os

import torch
from torch import nn


def pool_in_time(base, segments):
    base.segments = segments


def prepare(args, model, optimizer):
    model = nn.DataParallel(model).cuda()
    if args.resume:
        if args.temporal_pool:
            pool_in_time(model.module, args.num_segments)
        if os.path.isfile(args.resume):
            saved = torch.load(args.resume)  # expect: SF107
            args.start_epoch = saved["epoch"]
            model.load_state_dict(saved["state_dict"])
            optimizer.load_state_dict(saved["optimizer"])
    return model
