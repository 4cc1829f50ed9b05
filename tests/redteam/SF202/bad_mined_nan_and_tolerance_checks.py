"""Mined shape: a mixture-model fit checks the loss for NaN and compares it with the previous loss in an `if` on every iteration, two host syncs per step (bad)."""
import torch


def fit(model, data, optimizer, draw_samples, epochs=500, tol=1e-4, device="cuda"):
    batch = torch.as_tensor(data, dtype=torch.float32, device=device)
    previous = None
    for epoch in range(epochs):
        z, w = draw_samples()
        optimizer.zero_grad()
        loss = -model(batch, z.to(device), w.to(device))
        if torch.isnan(loss).any():  # expect: SF202
            raise ValueError(f"NaN loss at epoch {epoch}")
        if previous is not None and abs(loss - previous) < tol:  # expect: SF202
            break
        previous = loss.detach()
        loss.backward()
        optimizer.step()
