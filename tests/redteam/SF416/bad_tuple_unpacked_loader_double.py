"""A physics regression loop that unpacks three tensors from the loader and casts one to double by a discarded call."""
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    for _ in range(epochs):
        for coords, forces, energy in loader:
            energy.double()  # expect: SF416
            pred = model(coords)
            loss = ((pred - energy) ** 2).mean() + forces.abs().mean() * 0
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
