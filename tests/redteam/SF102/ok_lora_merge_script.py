"""LoRA merge script: builds the merged weight dict once under no_grad from base + B@A and saves it (one-shot conversion, not a cache)."""
import sys

import torch


@torch.no_grad()
def merge(base_path, lora_path, out_path, scale=2.0, device="cuda"):
    base = torch.load(base_path, map_location=device)
    lora = torch.load(lora_path, map_location=device)
    merged = {}
    for name, weight in base.items():
        a = lora.get(name.replace(".weight", ".lora_A.weight"))
        b = lora.get(name.replace(".weight", ".lora_B.weight"))
        if a is not None and b is not None:
            merged[name] = (weight + scale * (b @ a)).to(weight.dtype)
        else:
            merged[name] = weight
    torch.save(merged, out_path)


if __name__ == "__main__":
    merge(*sys.argv[1:4])
