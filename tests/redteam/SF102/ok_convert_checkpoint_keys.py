"""Checkpoint conversion script: loads a state dict once, renames keys into a new module-level dict and torch.save's it (one-shot, not a memo)."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("src")
parser.add_argument("dst")
args = parser.parse_args()

state = torch.load(args.src)
if "state_dict" in state:
    state = state["state_dict"]

converted = {}
for key, value in state.items():
    new_key = key.replace("module.", "").replace("backbone.", "encoder.")
    if new_key.endswith("num_batches_tracked"):
        continue
    converted[new_key] = value.detach().clone()

torch.save(converted, args.dst)
print(f"wrote {len(converted)} tensors to {args.dst}")
