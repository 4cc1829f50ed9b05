"""State-space model step function applied chunk by chunk, the state carried between updates (bad)."""
import torch


def train_chunks(ssm, chunks, targets, optimizer):
    state = ssm.zero_state()
    for chunk, target in zip(chunks, targets):
        y, state = ssm.step(chunk, state)  # expect: SF108
        loss = torch.nn.functional.mse_loss(y, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
