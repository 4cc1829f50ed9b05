"""All randomness comes from a numpy generator built from a seed; the model starts from zeros."""
import numpy as np
import torch

if __name__ == "__main__":
    rng = np.random.default_rng(2024)
    order = rng.permutation(len(rows))
    w = torch.zeros(4, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    for i in order:
        x, y = rows[i]
        opt.zero_grad()
        ((x @ w - y) ** 2).backward()
        opt.step()
