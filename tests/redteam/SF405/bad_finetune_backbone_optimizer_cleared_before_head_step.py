"""Fine-tuning with a slow optimizer for the whole network and a fast one for the classifier; the slow
one's clear runs after backward and before the fast one's step, so the classifier never moves (bad)."""
import torch


def finetune(net, loader, steps):
    slow = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9)
    fast = torch.optim.SGD(net.classifier.parameters(), lr=1e-2, momentum=0.9)
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        if i % 4 == 0:
            slow.step()
        slow.zero_grad()  # expect: SF405
        fast.step()
        fast.zero_grad()
        if i == steps:
            break
