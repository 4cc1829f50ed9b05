"""Progressive resizing: at chosen epochs the loader is rebuilt at a larger resolution and the cache flushed once (epoch loop, not the batch loop)."""
import torch


def train(model, make_loader, optimizer, criterion, epochs, schedule):
    size = schedule[0]
    loader = make_loader(size)
    for epoch in range(epochs):
        if epoch in schedule:
            size = schedule[epoch]
            loader = make_loader(size)
            torch.cuda.empty_cache()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
