"""Strict model load, plus optimizer and scheduler state (no strict argument at all)."""
import torch


def resume(net, opt, sched, path):
    blob = torch.load(path, map_location="cpu")
    net.load_state_dict(blob["net"])
    opt.load_state_dict(blob["opt"])
    sched.load_state_dict(blob["sched"])
