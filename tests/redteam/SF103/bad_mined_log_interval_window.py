"""Mined shape: a module-level model is trained by a function that adds each loss tensor after the step and only
resets the sum when it prints at the log interval (bad: the interval is a logging window, not an optimizer step, so
log_interval graphs stay alive and the epoch's tail is returned with history)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.GRU(16, 32, batch_first=True)
head = nn.Linear(32, 4)
optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)


def train(loader, log_interval=20, clip=0.5):
    model.train()
    train_loss = 0
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        output, _ = model(data.float())
        loss = F.cross_entropy(head(output[:, -1]), target.long())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        train_loss += loss  # expect: SF103
        if batch_idx > 0 and batch_idx % log_interval == 0:
            print(batch_idx, train_loss.item() / log_interval)
            train_loss = 0
    return train_loss.item() / len(loader.dataset)
