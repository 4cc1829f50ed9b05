"""Mined shape: one tuple assignment wraps every batch tensor in Variable(..., requires_grad=True).cuda(); the ground truth then reaches L1Loss through .unsqueeze(1) (bad)."""
import torch
from torch.autograd import Variable


def train_one_epoch(loader, recon_net, optimizer, l1):
    smoothed = 0.0
    for step, (kspace, sampling, coils, truth) in enumerate(loader):
        kspace, sampling, coils, truth = Variable(kspace, requires_grad=True).cuda(), Variable(sampling).cuda(), Variable(coils).cuda(), Variable(truth, requires_grad=True).cuda()  # expect: SF101
        optimizer.zero_grad()
        image, _ = recon_net(kspace, sampling, coils)
        loss = l1(image.unsqueeze(1), truth.unsqueeze(1))
        loss.backward()
        optimizer.step()
        smoothed = 0.9 * smoothed + 0.1 * loss.item()
    return smoothed


if __name__ == "__main__":
    criterion = torch.nn.L1Loss()
