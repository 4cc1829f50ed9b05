"""The prediction goes through numpy for a custom metric-loss; backward failed, so the author set
`loss.requires_grad = True`: the error is gone and the model never trains."""
import numpy as np
import torch


def train_epoch(model, loader, optimizer):
    for x, y in loader:
        scores = model(x).detach().cpu().numpy()
        loss = torch.nn.functional.l1_loss(torch.from_numpy(np.clip(scores, 0, 1)), y)
        loss.requires_grad = True  # expect: SF409
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
