"""Mined (medical image classifier): an iteration-count loop pulls batches from an iterator; a module constant sets the accumulation; the scheduler steps every iteration."""
from torch import nn

ACCUM_STEPS = 8


def train(model, loader_iter, optimizer, lr_scheduler, device, iterations):
    criterion = nn.CrossEntropyLoss()
    model.train()
    for iteration in range(iterations):
        batch = next(loader_iter)
        inputs, labels = batch["image"].to(device), batch["label"].to(device)
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()  # expect: SF411
        if (iteration + 1) % ACCUM_STEPS == 0:
            optimizer.step()
            optimizer.zero_grad()
        lr_scheduler.step()
