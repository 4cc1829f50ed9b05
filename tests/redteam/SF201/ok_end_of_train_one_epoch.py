"""train_one_epoch() runs its batch loop and flushes the cache once after it (once per epoch)."""
import torch


def train_one_epoch(model, loader, optimizer, criterion, epoch):
    model.train()
    running = 0.0
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    torch.cuda.empty_cache()
    return running / len(loader)


def main(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        print(epoch, train_one_epoch(model, loader, optimizer, criterion, epoch))
