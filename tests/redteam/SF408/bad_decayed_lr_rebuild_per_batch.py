"""The learning rate is 'scheduled' by building a new SGD with momentum on every batch."""
import torch.optim as optim

for i, (x, y) in enumerate(loader):
    lr = base_lr * (0.1 ** (i // 1000))
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)  # expect: SF408
    opt.zero_grad()
    criterion(model(x), y).backward()
    opt.step()
