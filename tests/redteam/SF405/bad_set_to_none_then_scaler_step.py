"""AMP: gradients set to None after the scaled backward, then the scaler steps nothing."""
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in loader:
    with torch.autocast("cuda"):
        loss = model(x)
    scaler.scale(loss).backward()
    optimizer.zero_grad(set_to_none=True)  # expect: SF405
    scaler.step(optimizer)
    scaler.update()
