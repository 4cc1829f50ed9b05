"""The MNIST-style test() of a training script without no_grad."""
import torch.nn.functional as F


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    for data, target in test_loader:
        output = model(data.to(device))  # expect: SF106
        test_loss += F.nll_loss(output, target.to(device), reduction="sum").item()
    return test_loss / len(test_loader.dataset)
