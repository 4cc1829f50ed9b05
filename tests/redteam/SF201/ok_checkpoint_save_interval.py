"""Cleanup after saving a checkpoint, behind the save interval, in the training loop (phase boundary)."""
import gc

import torch


def train(model, optimizer, loader, save_every, ckpt_dir):
    for step, batch in enumerate(loader, start=1):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % save_every == 0:
            torch.save({"model": model.state_dict(), "optim": optimizer.state_dict()}, f"{ckpt_dir}/step{step}.pt")
            gc.collect()
            torch.cuda.empty_cache()
