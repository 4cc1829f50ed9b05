"""accelerate's accumulate(): a torch clip on every pass (no sync_gradients guard)."""
import torch
from accelerate import Accelerator


def main(model, optimizer, loader):
    accelerator = Accelerator(gradient_accumulation_steps=8)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    for batch in loader:
        with accelerator.accumulate(model):
            out = model(**batch)
            accelerator.backward(out.loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: SF418
            optimizer.step()
            optimizer.zero_grad()
