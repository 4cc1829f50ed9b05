"""Checkpoint averaging script: sums the last N state dicts (loaded to CPU) into one dict and saves the mean (one-shot)."""
import glob

import torch


def average_checkpoints(pattern, out, last=5):
    paths = sorted(glob.glob(pattern))[-last:]
    avg = {}
    for path in paths:
        state = torch.load(path, map_location="cpu")["model"]
        for k, v in state.items():
            v = v.float()
            if k in avg:
                avg[k] += v
            else:
                avg[k] = v.clone()
    for k in avg:
        avg[k].div_(len(paths))
    torch.save({"model": avg}, out)
