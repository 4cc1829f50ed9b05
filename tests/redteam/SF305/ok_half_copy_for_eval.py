"""A half copy of the model is made for fast evaluation; the optimizer trains the float32 original."""
import copy

import torch

model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    fast = copy.deepcopy(model).half().eval()
    with torch.no_grad():
        acc = evaluate(fast, val_loader)
