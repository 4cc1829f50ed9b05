"""memory summary and barrier once per epoch, after the batch loop (ok)."""
import torch

for epoch in range(num_epochs):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.cuda.synchronize()
    print(torch.cuda.memory_summary())
