"""Mined shape: a test(model, epoch) loop clears the optimizer's gradients every batch (a copy of the train loop) but never backpropagates; the forward runs with autograd on after .eval() (bad)."""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def test(model, epoch, test_loader, optimizer):
    model.eval()
    correct = 0
    for data, target in test_loader:
        optimizer.zero_grad()
        data = data.to(device)
        target = target.to(device)
        output = model(data.float())  # expect: SF106
        pred = output.max(1)[1]
        correct += pred.eq(target).cpu().sum().item()
    print(f"epoch {epoch}: {correct}/{len(test_loader.dataset)}")
