"""accelerate's clip_grad_norm_ handed the outputs' loss."""
from accelerate import Accelerator


def train(model, optimizer, loader):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(loss, 1.0)  # expect: SF417
        optimizer.step()
        optimizer.zero_grad()
