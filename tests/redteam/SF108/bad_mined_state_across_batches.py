"""Mined shape: the hidden state is initialised once per epoch and fed back through `outputs, hidden = net(inputs, hidden)` on every batch, with a backward each batch and no detach (bad)."""
import torch


def train(net, trainloader, criterion, optimizer, epochs, batch_size, device):
    for epoch in range(epochs):
        hidden = net.init_hidden(batch_size)
        train_loss = 0.0
        for inputs, labels, _ in trainloader:
            inputs = inputs.unsqueeze(1).to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            outputs, hidden = net(inputs, hidden)  # expect: SF108
            loss = criterion(outputs, labels)
            train_loss += loss.item()
            loss.backward()
            optimizer.step()
