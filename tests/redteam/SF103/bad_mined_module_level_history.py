"""Mined shape: a module-level MNIST script appends every batch loss tensor to a list that lives for the whole run (bad)."""
import torch
from torch import nn, optim

classifier = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(classifier.parameters(), lr=1e-3)
train_batches = [(torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))) for _ in range(10)]
history = []

for epoch in range(3):
    for i, (images, labels) in enumerate(train_batches):
        optimizer.zero_grad()
        logits = classifier(images)
        loss = criterion(logits, labels)
        history.append(loss)  # expect: SF103
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(epoch, i, loss.item())
