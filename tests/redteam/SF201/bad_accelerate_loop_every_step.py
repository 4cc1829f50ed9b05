"""accelerate training loop flushing the CUDA cache after every optimizer step, with no interval (bad)."""
import torch
from accelerate import Accelerator


def train(model, optimizer, scheduler, loader, epochs):
    accelerator = Accelerator(mixed_precision="bf16")
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    for epoch in range(epochs):
        model.train()
        for batch in loader:
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            torch.cuda.empty_cache()  # expect: SF201
        accelerator.print(f"epoch {epoch} done")
