"""A diagnostic measures the validation gradient norm after model.eval() and leaves the gradients behind."""
import torch


def val_grad_norm(net, batch, criterion):
    loss = criterion(net(batch[0]), batch[1])
    loss.backward()
    return torch.sqrt(sum((p.grad ** 2).sum() for p in net.parameters() if p.grad is not None))


for epoch in range(epochs):
    for x, y in train_loader:
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    net.eval()
    print("val grad norm", val_grad_norm(net, next(iter(val_loader)), criterion))  # expect: SF419
    net.train()
