"""Trajectory model with a smoothness term between adjacent time slices of its own output (`F.l1_loss(out[:, 1:], out[:, :-1])`, different elements, legitimate)."""
import torch.nn.functional as F


def traj_step(model, optimizer, history, future, smooth_weight=0.05):
    out = model(history)
    fit = F.mse_loss(out, future)
    smooth = F.l1_loss(out[:, 1:], out[:, :-1])
    loss = fit + smooth_weight * smooth
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
