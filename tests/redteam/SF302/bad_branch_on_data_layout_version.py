"""The legacy autocast runs in a branch on `layout_version`, read from the run's config: which data columns a
batch has, not which torch is installed (bad; the old test took any test spelling "version" for a fallback)."""
import torch


def train(model, loader, optimizer, cfg):
    layout_version = cfg["layout_version"]
    for batch in loader:
        optimizer.zero_grad()
        if layout_version >= 2:
            with torch.cuda.amp.autocast():  # expect: SF302
                loss = model(batch["pixels"].cuda()).logsumexp(-1).mean()
        else:
            loss = model(batch[0].cuda()).logsumexp(-1).mean()
        loss.backward()
        optimizer.step()
