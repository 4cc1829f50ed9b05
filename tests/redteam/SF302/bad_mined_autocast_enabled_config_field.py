"""Mined (vision transformer trainer): legacy autocast enabled by a config attribute, inside the per-batch loop."""
import torch


def run_epoch(cfg, net, criterion, loader, optimizer, scaler_wrapper):
    net.train()
    for samples, labels in loader:
        samples = samples.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED):  # expect: SF302
            logits = net(samples)
        loss = criterion(logits, labels)
        optimizer.zero_grad()
        scaler_wrapper(loss, optimizer, parameters=net.parameters())
