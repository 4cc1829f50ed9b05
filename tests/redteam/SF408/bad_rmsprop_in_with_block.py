"""Inside a `with` block of the loop body: RMSprop rebuilt on every pass."""
import torch

for step, batch in enumerate(loader):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9)  # expect: SF408
        loss = model(batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
