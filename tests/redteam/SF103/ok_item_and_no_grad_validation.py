"""ok item and no grad validation."""
import torch


def validate(net, testloader, criterion):
    net.eval()
    test_loss = 0.0
    for data in testloader:
        with torch.no_grad():
            outputs = net(data["images"])
            loss = criterion(outputs, data["masks"])
            test_loss += loss
    return test_loss / len(testloader)
