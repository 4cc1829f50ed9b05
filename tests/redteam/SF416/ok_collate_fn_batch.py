"""A loader with a custom collate_fn returns an object whose `.to` moves it in place (PyG-style)."""
from torch.utils.data import DataLoader


def train(model, dataset, collate, optimizer, device):
    for batch in DataLoader(dataset, batch_size=4, collate_fn=collate):
        batch.to(device)
        graph, target = batch
        graph.to(device)
        loss = (model(graph) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
