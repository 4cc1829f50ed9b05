"""Output feedback: the previous prediction is fed back as the next input, trained every step (bad)."""
import torch


def teacherless_train(model, xs, ys, optimizer):
    prev = torch.zeros_like(ys[0])
    for x, y in zip(xs, ys):
        prev = model(torch.cat([x, prev], -1))  # expect: SF108
        loss = torch.nn.functional.mse_loss(prev, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
