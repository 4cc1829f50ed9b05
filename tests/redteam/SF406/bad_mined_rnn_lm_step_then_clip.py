"""Mined (LSTM language model script): hidden state repackaged each batch; zero_grad, backward, step, then clip."""
import torch


def detach_state(h):
    return tuple(t.detach() for t in h)


def train_lm(lm, batches, criterion, optimizer, clip_at, bsz):
    state = lm.init_state(bsz)
    for tokens, nxt in batches:
        state = detach_state(state)
        scores, state = lm(tokens, state)
        loss = criterion(scores, nxt.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), clip_at)  # expect: SF406
