"""Keras-like fit() method on a model wrapper: empty_cache() right after backward, before the step, on every batch (bad)."""
import torch


class Model:
    def __init__(self, net, optimizer, criterion):
        self.net, self.optimizer, self.criterion = net, optimizer, criterion

    def fit(self, loader, epochs=1, log_every=50):
        for epoch in range(epochs):
            for i, (x, y) in enumerate(loader):
                self.optimizer.zero_grad()
                loss = self.criterion(self.net(x.cuda()), y.cuda())
                loss.backward()
                torch.cuda.empty_cache()  # expect: SF201
                self.optimizer.step()
                if i % log_every == 0:
                    print(f"epoch {epoch} iter {i} loss {loss.item():.4f}")
