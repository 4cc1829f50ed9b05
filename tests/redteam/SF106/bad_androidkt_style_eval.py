"""Classic tutorial evaluation: eval mode set, but no no_grad around the test loop."""
import torch


def test_accuracy(net, testloader):
    net.eval()
    correct = 0
    total = 0
    for images, labels in testloader:
        outputs = net(images)  # expect: SF106
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total
