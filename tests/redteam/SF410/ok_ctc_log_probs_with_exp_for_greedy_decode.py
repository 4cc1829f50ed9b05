"""exp(log_softmax) feeds the greedy decoder only; the CTC loss gets the log-probabilities."""
import torch
from torch import nn

ctc = nn.CTCLoss(blank=0, zero_infinity=True)


def step(model, feats, targets, feat_lens, target_lens, optimizer):
    log_probs = torch.log_softmax(model(feats), dim=-1)
    hyps = torch.exp(log_probs).argmax(-1)
    loss = ctc(log_probs.transpose(0, 1), targets, feat_lens, target_lens)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return hyps
