"""Segmentation trainer that splits each batch into chunks of 7 and logs the summed chunk losses."""
import torch


def train_epoch(net, trainloader, criterion, optimizer):
    net.train()
    epoch_loss = 0.0
    for data in trainloader:
        inputs, labels = data["images"], data["masks"]
        for idx in range(0, len(inputs), 7):
            optimizer.zero_grad()
            outputs = net(inputs[idx:idx + 7])
            loss = criterion(outputs, labels[idx:idx + 7])
            loss.backward()
            optimizer.step()
            epoch_loss += loss  # expect: SF103
    return epoch_loss
