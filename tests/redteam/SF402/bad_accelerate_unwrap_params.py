"""accelerate loop undoing the step on `accelerator.unwrap_model(model).parameters()` with the gradient (bad)."""
import torch
from accelerate import Accelerator


def train(model, loader, lr, probe):
    accelerator = Accelerator()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        probe(model, batch)
        with torch.no_grad():
            for p in accelerator.unwrap_model(model).parameters():
                if p.grad is not None:
                    p.add_(p.grad, alpha=lr)  # expect: SF402
        optimizer.zero_grad()
