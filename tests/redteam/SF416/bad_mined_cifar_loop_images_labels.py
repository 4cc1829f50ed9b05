"""A CIFAR-style script: images and labels from a default DataLoader moved by discarded statements."""
import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
train_set = torchvision.datasets.CIFAR10(root="data", train=True, download=True)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)).to(device)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.01)

for epoch in range(3):
    for step, (images, labels) in enumerate(train_loader):
        images.to(device)  # expect: SF416
        out = net(images)
        loss = criterion(out, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
