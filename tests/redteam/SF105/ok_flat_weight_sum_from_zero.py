"""Near miss of the grown flat sums: what is summed from `0` on every pass is a concatenation of the parameters'
values (a running sum for weight averaging read back into the model), not of their gradients (silent)."""
import torch


def averaged_weights(model, optimizer, loader, criterion):
    running = 0
    for count, (x, y) in enumerate(loader, start=1):
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        running += torch.cat([p.detach().view(-1) for p in model.parameters()])
    torch.nn.utils.vector_to_parameters(running / count, model.parameters())
