"""Inference mode generation (must stay silent)."""
import torch


@torch.inference_mode()
def generate(model, prompts):
    with torch.autocast("cuda", dtype=torch.float16):
        return model.generate(prompts, max_new_tokens=32)


def train(model, loader, optimizer):
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
