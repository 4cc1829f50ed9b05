"""Mined shape: an apex-amp train epoch scales the loss, clips master params, steps, then calls torch.cuda.synchronize() on every batch (bad)."""
import torch
from apex import amp


def train_epoch(epoch, model, loader, optimizer, scheduler, criterion):
    model.train()
    for i, sample in enumerate(loader):
        images = sample["img"].cuda(non_blocking=True)
        masks = sample["msk"].cuda(non_blocking=True)
        loss = criterion(model(images), masks)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.1)
        optimizer.step()
        torch.cuda.synchronize()  # expect: SF202
    scheduler.step(epoch)
