"""A CIFAR training loop moving both halves of each batch in one tuple expression whose value is thrown away."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def fit(net, train_set, epochs, device):
    loader = DataLoader(train_set, batch_size=4, shuffle=True, num_workers=2)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    for epoch in range(epochs):
        for i, data in enumerate(loader):
            inputs, labels = data
            inputs.to(device), labels.to(device)  # expect: SF416
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels)
            loss.backward()
            optimizer.step()
