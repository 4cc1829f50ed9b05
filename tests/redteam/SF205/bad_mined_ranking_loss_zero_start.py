"""Mined shape: a ranking-loss helper called every step starts its sum from `Variable(torch.zeros(1).cuda())` (bad)."""
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def ranking_loss(score, targets, proposal_num):
    loss = Variable(torch.zeros(1).cuda())  # expect: SF205
    batch_size = score.size(0)
    for i in range(proposal_num):
        above = (targets > targets[:, i].unsqueeze(1)).float()
        pivot = score[:, i].unsqueeze(1)
        loss = loss + torch.sum(F.relu((1 - pivot + score) * above))
    return loss / batch_size


def train(model, loader, optimizer, proposal_num):
    for images, targets in loader:
        scores = model(images.cuda())
        loss = ranking_loss(scores, targets.cuda(), proposal_num)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
