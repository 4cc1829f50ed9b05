"""A prior from numpy turned into a tensor before the loop and copied each iteration."""
import numpy as np
import torch


def train(model, loader, optimizer, prior_counts):
    prior = torch.from_numpy(np.log(prior_counts / prior_counts.sum())).float()
    print("prior", prior)
    for x, y in loader:
        logits = model(x.cuda()) + prior.cuda()  # expect: SF207
        loss = torch.nn.functional.cross_entropy(logits, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
