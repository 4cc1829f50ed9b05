"""Masked autoencoder: the target is the patchified input, the loss is taken on the masked patches only (legitimate reconstruction)."""
import torch


def patchify(imgs, p=16):
    b, c, h, w = imgs.shape
    x = imgs.reshape(b, c, h // p, p, w // p, p)
    return torch.einsum("nchpwq->nhwpqc", x).reshape(b, (h // p) * (w // p), p * p * c)


def mae_step(model, optimizer, imgs, mask_ratio=0.75):
    pred, mask = model(imgs, mask_ratio)
    target = patchify(imgs)
    mean, var = target.mean(dim=-1, keepdim=True), target.var(dim=-1, keepdim=True)
    target = (target - mean) / (var + 1.0e-6) ** 0.5
    loss = ((pred - target) ** 2).mean(dim=-1)
    loss = (loss * mask).sum() / mask.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
