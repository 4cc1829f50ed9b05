"""Mined shape: an autoencoder loop calls set_detect_anomaly(True) inside the batch loop, after every optimizer step (bad)."""
import torch


def train(model, loader, criterion, optimizer, epochs, device):
    errors = []
    for epoch in range(epochs):
        epoch_loss = []
        for step, batch in enumerate(loader):
            x_in = batch.type(torch.float32).to(device)
            loss = criterion(model(x_in), x_in)
            model.zero_grad()
            loss.backward()
            optimizer.step()
            torch.autograd.set_detect_anomaly(True)  # expect: SF203
            epoch_loss.append(loss.item())
        errors.append(sum(epoch_loss) / len(epoch_loss))
    return errors
