"""A single-process script saving and logging freely."""
import torch


def train(model, loader, opt, path):
    with open(path + ".log", "w") as log:
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            log.write(f"{loss.item()}\n")
    torch.save(model.state_dict(), path)
