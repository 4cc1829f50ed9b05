"""Pure bfloat16 training (float32's range; a different trade-off the rule leaves alone)."""
import torch

model = Net().cuda().to(dtype=torch.bfloat16)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda().bfloat16()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
