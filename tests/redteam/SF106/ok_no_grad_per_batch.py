"""ok no grad per batch."""
import torch


def validate(net, testloader, criterion):
    net.eval()
    test_loss = 0.0
    for data in testloader:
        with torch.no_grad():
            outputs = net(data["images"])
            test_loss += criterion(outputs, data["masks"]).item()
    return test_loss
