"""Near miss: a helper runs the model over micro-batches and returns the summed loss, which its caller backpropagates (training, not evaluation)."""
import torch


def microbatch_loss(model, chunks, criterion):
    total = 0.0
    for x, y in chunks:
        total = total + criterion(model(x), y)
    return total / len(chunks)


def train(model, loader, criterion, optimizer):
    for batch in loader:
        loss = microbatch_loss(model, batch, criterion)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
