"""Mined shape: a hand-written weighted binary cross-entropy function casts its target to float32 and calls
`requires_grad_(True)` on it (and on the output) before the log terms; the epoch loop hands it the labels of each
batch and backpropagates the result (bad: nothing ever reads the labels' gradient)."""
import torch


def weighted_bce(output, target, weight):
    target = target.to(dtype=torch.float32)
    output.requires_grad_(True)
    target.requires_grad_(True)  # expect: SF101
    log_p = torch.log(torch.clamp(output, min=1e-10, max=1.0 - 1e-10))
    log_q = torch.log(torch.clamp(1 - output, min=1e-10, max=1.0 - 1e-10))
    return -torch.sum(target * log_p + weight * (1 - target) * log_q)


def run_epoch(model, loader, optimizer=None, pos_weight=1.0):
    if optimizer is None:
        model.eval()
    else:
        model.train()
    total, probs = 0.0, []
    for features, labels in loader:
        prediction = model(features)
        loss = weighted_bce(prediction, labels, pos_weight)
        probs += prediction.detach().cpu().tolist()
        total += loss.item()
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return total / len(loader), probs
