"""Mined shape: a search-space validation pass marks the target with Variable(..., requires_grad=True), a same-file helper reshapes (input, target) and returns them as a tuple, then the criterion gets the target (bad)."""
import torch
from torch.autograd import Variable


def shape_pair(batch_in, batch_target, criterion):
    if isinstance(criterion, torch.nn.MSELoss):
        return batch_in.view(batch_in.size(0), -1), batch_target.view(batch_target.size(0), -1).float()
    return batch_in, batch_target


def score_architecture(valid_queue, supernet, criterion):
    supernet.eval()
    seen = 0.0
    for step, (batch_in, batch_target) in enumerate(valid_queue):
        batch_in = Variable(batch_in, requires_grad=True)
        batch_target = Variable(batch_target, requires_grad=True)  # expect: SF101
        batch_in, batch_target = shape_pair(batch_in, batch_target, criterion)
        logits = supernet(batch_in)
        loss = criterion(logits, batch_target)
        seen += loss.data.item()
    return seen
