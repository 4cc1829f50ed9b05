"""Mined shape: the ground-truth anomaly mask is squeezed and binarised with a tuple of masked assignments, then
made to require grad, and summed into focal and dice losses (classes of another module) over every layer's map (bad)."""
from losses import DiceLoss, FocalLoss


def train_epoch(model, loader, optimizer):
    focal, dice = FocalLoss(), DiceLoss()
    for images, masks in loader:
        maps = model(images)
        gt = masks.squeeze()
        gt[gt > 0.5], gt[gt <= 0.5] = 1, 0
        gt.requires_grad = True  # expect: SF101
        loss = 0
        for layer_map in maps:
            loss += focal(layer_map, gt)
            loss += dice(layer_map[:, 1, :, :], gt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
