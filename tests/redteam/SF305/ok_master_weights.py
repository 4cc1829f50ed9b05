"""apex-style master weights: the model is half, the optimizer steps float32 copies that are copied back."""
import torch

model = Net().cuda().half()
master = [p.detach().clone().float() for p in model.parameters()]
for p in master:
    p.requires_grad = True
optimizer = torch.optim.SGD(master, lr=0.1, momentum=0.9)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda().half()).float(), y.cuda()) * 128.0
    model.zero_grad()
    loss.backward()
    for m, p in zip(master, model.parameters()):
        m.grad = p.grad.float() / 128.0
    optimizer.step()
    with torch.no_grad():
        for m, p in zip(master, model.parameters()):
            p.copy_(m)
