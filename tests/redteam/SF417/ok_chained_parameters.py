"""Parameters of two models chained together."""
import itertools

import torch


def step(encoder, decoder, batch, optimizer):
    loss = decoder(encoder(batch)).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(itertools.chain(encoder.parameters(), decoder.parameters()), 1.0)
    optimizer.step()
