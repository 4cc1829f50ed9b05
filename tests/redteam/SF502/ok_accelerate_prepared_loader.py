"""accelerate re-creates the loader with its own sampler and sets the epoch itself; no DistributedSampler here."""
from accelerate import Accelerator
from torch.utils.data import DataLoader


def main(model, optimizer, dataset, epochs):
    accelerator = Accelerator()
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for batch in loader:
            accelerator.backward(model(batch).sum())
            optimizer.step()
