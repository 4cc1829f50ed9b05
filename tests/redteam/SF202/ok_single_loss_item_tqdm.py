"""one loss.item() per step for the progress bar (ok)."""
import torch
from tqdm import tqdm

progress = tqdm(loader)
for images, targets in progress:
    images, targets = images.cuda(non_blocking=True), targets.cuda(non_blocking=True)
    loss = criterion(model(images), targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    progress.set_description(f"loss {loss.item():.4f}")
