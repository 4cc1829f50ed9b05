"""Mined (homography network): a photometric loss helper returns its mean re-leafed with torch.tensor(..., requires_grad=True); the caller trains on it."""
import torch


def photometric_loss(warped, target):
    diff = (target - warped).float().mean()
    diff = torch.tensor(diff, requires_grad=True)  # expect: SF409
    return diff


def train(net, warp, pairs, lr=1e-4):
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for patch_a, patch_b in pairs:
        h = net(torch.cat([patch_a, patch_b], dim=1))
        loss = photometric_loss(warp(patch_a, h), patch_b)
        opt.zero_grad()
        loss.backward()
        opt.step()
