"""Fine-tuning with BatchNorm frozen: eval() for the running statistics, then a real optimizer step."""
import torch


def finetune(model, loader, optimizer):
    model.eval()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
