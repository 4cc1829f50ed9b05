"""The trainer sets the epoch on its own sampler at the top of each epoch."""
from torch.utils.data import DataLoader, DistributedSampler


class Runner:
    def __init__(self, dataset):
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=8, sampler=self.sampler)

    def run(self, model, opt, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for batch in self.loader:
                model(batch).sum().backward()
                opt.step()
