"""Mined (tensor-parallel example script): module-level loop with `output.sum().backward()` and `optimizer.step()`, no clear."""
import torch

lr = 0.25
num_iters = 10
model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))
optimizer = torch.optim.AdamW(model.parameters(), lr=lr, foreach=True)

for i in range(num_iters):
    torch.manual_seed(i)
    batch = torch.rand(20, 10)
    output = model(batch)
    output.sum().backward()
    optimizer.step()  # expect: SF404
    print(f"iter {i} done")
