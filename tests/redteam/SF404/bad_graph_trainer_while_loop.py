"""A graph-learning trainer with a while loop over sampled blocks; zero_grad only once before training."""
import torch as th


class NodePredictionTrainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = th.optim.Adam(model.parameters(), lr=lr)

    def fit(self, sampler, max_steps):
        self.optimizer.zero_grad()
        self.model.train()
        step = 0
        while step < max_steps:
            blocks, labels = sampler.sample()
            logits = self.model(blocks)
            loss = th.nn.functional.cross_entropy(logits, labels)
            loss.backward()
            self.optimizer.step()  # expect: SF404
            step += 1
