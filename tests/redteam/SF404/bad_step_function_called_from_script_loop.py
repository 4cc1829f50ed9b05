"""A tutorial-style script: the per-batch function steps, the loop never clears."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def train_batch(images, labels):
    outputs = model(images.view(images.size(0), -1))
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()  # expect: SF404
    return loss.item()


for epoch in range(10):
    for images, labels in train_loader:
        train_batch(images, labels)
