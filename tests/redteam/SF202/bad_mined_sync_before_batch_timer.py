"""Mined shape: a train_one_epoch with amp/no-amp backward branches synchronises the device after each step to feed a batch-time meter (bad)."""
import time

import torch


def train_one_epoch(config, model, criterion, loader, optimizer, scaler, meter):
    model.train()
    end = time.time()
    for idx, (samples, targets) in enumerate(loader):
        samples = samples.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        if config.use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        optimizer.step()
        torch.cuda.synchronize()  # expect: SF202
        meter.update(time.time() - end)
        end = time.time()
