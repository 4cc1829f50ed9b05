"""opacus make_private hands back its own loader (with its own distributed Poisson sampling) in place of the one built here."""
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, DistributedSampler


def main(model, optimizer, train_set, epochs):
    loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.0, max_grad_norm=1.0)
    for epoch in range(epochs):
        for x, y in loader:
            model(x).sum().backward()
            optimizer.step()
