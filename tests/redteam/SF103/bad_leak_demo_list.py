"""A memory-leak demo: the per-batch losses are kept as tensors in a list for plotting."""
import torch.nn as nn
import torch.optim as optim


def run(model, train_loader, epochs):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    loss_log = []
    for epoch in range(epochs):
        for images, labels in train_loader:
            optimizer.zero_grad()
            outputs = model(images)
            batch_loss = criterion(outputs, labels)
            batch_loss.backward()
            optimizer.step()
            loss_log.append(batch_loss)  # expect: SF103
    return loss_log
