"""A factory returns the classifier moved to the GPU (`Classifier(...).cuda()`), and the entry point switches it to train mode as it hands it to the training routine; its `forward` ends in a softmax and the routine feeds the
output to CrossEntropyLoss (bad: softmax applied twice). Moves and mode switches return the module itself."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))

    def forward(self, x):
        return torch.softmax(self.body(x), dim=1)


def make_classifier(features, classes):
    return Classifier(features, classes).cuda()


def fit(net, loader, epochs):
    objective = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in loader:
            loss = objective(net(x.cuda()), y.cuda())  # expect: SF410
            opt.zero_grad()
            loss.backward()
            opt.step()


def main(loader):
    net = make_classifier(16, 4)
    fit(net.train(), loader, 3)
