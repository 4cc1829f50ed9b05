"""The cast sits in the middle of a chain, `net.half().cuda()`, in a plain training script."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
net.half().cuda()  # expect: SF305
sgd = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for epoch in range(90):
    for images, targets in loader:
        out = net(images.cuda().half())
        loss = nn.functional.cross_entropy(out, targets.cuda())
        sgd.zero_grad()
        loss.backward()
        sgd.step()
