"""Mined shape: test() rebuilds the network, loads its weights, switches to eval and scores the test loader without no_grad (bad)."""
import torch
from torch import nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DigitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))

    def forward(self, x):
        return self.body(x)


def test(test_set, weights="./model/digits.pth"):
    loader = DataLoader(test_set, batch_size=128)
    net = DigitNet().to(device)
    net.load_state_dict(torch.load(weights, map_location=device))
    net.eval()
    correct = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        scores = net(images)  # expect: SF106
        pred = scores.argmax(dim=1, keepdim=True)
        correct += pred.eq(labels.view_as(pred)).sum().item()
    print(f"accuracy {100.0 * correct / len(loader.dataset):.1f}%")
