"""Mean-teacher consistency: the EMA model's probabilities (computed under no_grad) are marked requires_grad before the consistency MSE (bad)."""
import torch
import torch.nn.functional as F


def semi_supervised_step(student, ema_model, optimizer, x_l, y_l, x_u, weight):
    logits_l = student(x_l)
    sup = F.cross_entropy(logits_l, y_l)
    with torch.no_grad():
        ema_probs = F.softmax(ema_model(x_u), dim=1)
    ema_probs.requires_grad_()  # expect: SF101
    student_probs = F.softmax(student(x_u), dim=1)
    consistency = F.mse_loss(student_probs, ema_probs)
    loss = sup + weight * consistency
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
