"""accelerate: the loader is prepared in its own call."""
import accelerate
from torch.utils.data import DataLoader


def main(model, optimizer, dataset):
    acc = accelerate.Accelerator()
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = acc.prepare(model)
    optimizer = acc.prepare(optimizer)
    loader = acc.prepare(loader)
    for batch in loader:
        acc.backward(model(batch).sum())
        optimizer.step()
