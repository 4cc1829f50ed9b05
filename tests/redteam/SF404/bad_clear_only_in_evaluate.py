"""The only clear is in an evaluation helper called once per epoch, outside the batch loop."""
import torch


def evaluate(model, optimizer, val_loader):
    optimizer.zero_grad()
    with torch.no_grad():
        return sum(model(x).mean().item() for x in val_loader)


def run(model, train_loader, val_loader, epochs):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for x in train_loader:
            model(x).mean().backward()
            optimizer.step()  # expect: SF404
        evaluate(model, optimizer, val_loader)
