"""An update function handed to a training loop of the same file; it never clears."""
import torch


def update(model, optimizer, batch):
    model.train()
    x, y = batch
    loss = torch.nn.functional.nll_loss(model(x), y)
    loss.backward()
    optimizer.step()  # expect: SF404
    return loss.item()


def run(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    for epoch in range(epochs):
        for batch in loader:
            update(model, optimizer, batch)
