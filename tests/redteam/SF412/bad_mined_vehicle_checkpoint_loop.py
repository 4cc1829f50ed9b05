"""Mined (per-vehicle evaluation script): one model re-loaded from each vehicle's checkpoint, loosely, result dropped."""
import torch

VEHICLES = ["car", "truck"]


def main(build_model, ckpt_pattern, evaluate):
    net = build_model()
    for name in VEHICLES:
        ckpt = torch.load(ckpt_pattern.format(name), map_location="cpu")
        net.load_state_dict(ckpt["state_dict"], strict=False)  # expect: SF412
        net.eval()
        evaluate(net, name)
