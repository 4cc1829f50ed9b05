"""Depth-estimation helper using the full torch.nn.functional path: the ground-truth depth is cloned and given requires_grad = True (bad)."""
import torch


def depth_loss(pred_depth, gt_depth, valid):
    gt = gt_depth.clone()
    gt.requires_grad = True  # expect: SF101
    return torch.nn.functional.l1_loss(pred_depth[valid], gt[valid])


def train(model, loader, optimizer):
    for rgb, depth in loader:
        pred = model(rgb)
        loss = depth_loss(pred, depth, depth > 0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
