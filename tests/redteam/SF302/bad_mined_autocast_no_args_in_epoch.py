"""Mined (masked-autoencoder pretraining): `with torch.cuda.amp.autocast():` around the forward of each batch, scaling done by a helper object."""
import torch


def pretrain_epoch(model, batches, optimizer, grad_scaler_fn, device, ratio=0.75):
    model.train(True)
    for images, _ in batches:
        images = images.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():  # expect: SF302
            loss, _, _ = model(images, mask_ratio=ratio)
        grad_scaler_fn(loss, optimizer, parameters=model.parameters())
        optimizer.zero_grad()
