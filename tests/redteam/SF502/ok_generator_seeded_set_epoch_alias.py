"""set_epoch called through a bound method alias kept on the loop."""
from torch.utils.data import DataLoader, DistributedSampler


def main(model, dataset, opt, epochs):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).sum().backward()
            opt.step()
