"""CIFAR CNN whose forward ends in `nn.Softmax(dim=1)` held on self, trained with `nn.CrossEntropyLoss` (bad)."""
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, 10)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.features(x).flatten(1)
        return self.softmax(self.classifier(x))


net = SmallCNN()
criterion = nn.CrossEntropyLoss()
for inputs, labels in trainloader:
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, labels)  # expect: SF410
    loss.backward()
    optimizer.step()
