"""`import torch as th`: a consistency term written as th.nn.functional.mse_loss(pred_a, pred_a) instead of (pred_a, pred_b) (bad)."""
import torch as th


def consistency_step(model, optimizer, x, augment, weight=1.0):
    pred_a = model(augment(x))
    pred_b = model(augment(x))
    sup = pred_b.pow(2).mean() * 0.0
    consistency = th.nn.functional.mse_loss(pred_a, pred_a)  # expect: SF401
    loss = sup + weight * consistency
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
