"""Near miss: train_epoch() hands each loss to an update helper imported from another module (it may step); nothing shows it only evaluates."""
from utils import apply_update


def train_epoch(model, loader, criterion, optimizer):
    for x, y in loader:
        loss = criterion(model(x), y)
        apply_update(optimizer, loss)


def main(model, loader, criterion, optimizer):
    for epoch in range(3):
        train_epoch(model, loader, criterion, optimizer)
        loss = criterion(model(loader[0][0]), loader[0][1])
        loss.backward()
