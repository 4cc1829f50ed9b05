"""A train-one-epoch function unpacking `data` from the loader and calling `.cuda()` on the parts as statements."""
import torch
from torch.utils.data import DataLoader


def train_one_epoch(model, dataset, optimizer, loss_fn):
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    total = 0.0
    for i, data in enumerate(loader):
        inputs, targets = data
        inputs.cuda()  # expect: SF416
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
