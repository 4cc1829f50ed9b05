"""Legacy-API regression loop: the float label is wrapped as Variable(..., requires_grad=True) and only used as the MSE target (bad)."""
import torch
import torch.nn as nn
from torch.autograd import Variable


def train(model, loader, epochs, lr=1e-3):
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for inputs, labels in loader:
            inputs = Variable(inputs.cuda())
            labels = Variable(labels.float().cuda(), requires_grad=True)  # expect: SF101
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
