"""Mined shape: a module-level training script whose model, criterion and optimizer come from a settings module deletes the batch tensors, empties the CUDA cache and runs gc.collect() after every step (bad)."""
import gc

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)).to(device)
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
train_batches = []
n_epochs = 5

for epoch in range(n_epochs):
    for step, (pics, targets) in enumerate(train_batches):
        pics = pics.to(device)
        targets = targets.to(device)
        scores = net(pics)
        loss = loss_fn(scores, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        del pics, targets, scores
        torch.cuda.empty_cache()  # expect: SF201
        gc.collect()
    print(f"epoch {epoch + 1}/{n_epochs} loss {loss.item():.4f}")
