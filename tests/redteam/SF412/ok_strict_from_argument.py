"""strict comes from the command line: nothing shows it is False."""
import torch


def load(net, path, args):
    net.load_state_dict(torch.load(path, map_location="cpu"), strict=args.strict)
