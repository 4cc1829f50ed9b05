"""Lightning Fabric unscales inside `clip_gradients`."""
import torch
import lightning as L

fabric = L.Fabric(precision="16-mixed")
model, optimizer = fabric.setup(model, torch.optim.AdamW(model.parameters()))
for batch in loader:
    optimizer.zero_grad()
    loss = model(batch)
    fabric.backward(loss)
    fabric.clip_gradients(model, optimizer, max_norm=1.0)
    optimizer.step()
