"""Mined shape: a notebook-style `train_loop` function adds each batch's loss tensor after the optimizer step, divides
the sum by the number of batches and returns it with the accuracy and the model as a tuple (bad)."""
import torch


def train_loop(model, dataloader, loss_fn, optimizer, accuracy_fn, device):
    train_loss, train_acc = 0, 0
    model.train()
    for x, y in dataloader:
        x, y = x.to(device), y.to(device)
        pred = model(x)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss += loss  # expect: SF103
        train_acc += accuracy_fn(torch.argmax(pred, dim=1), y)
    train_loss /= len(dataloader)
    train_acc /= len(dataloader)
    return train_loss, train_acc, model
