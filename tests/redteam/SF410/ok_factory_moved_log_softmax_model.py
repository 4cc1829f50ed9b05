"""Near miss of bad_factory_moved_softmax_model: the classifier the factory moves to the GPU ends in
log_softmax and the routine uses NLLLoss, the matching pair (legitimate)."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))

    def forward(self, x):
        return torch.log_softmax(self.body(x), dim=1)


def make_classifier(features, classes):
    return Classifier(features, classes).cuda()


def fit(net, loader, epochs):
    objective = nn.NLLLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in loader:
            loss = objective(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


def main(loader):
    net = make_classifier(16, 4)
    fit(net.train(), loader, 3)
