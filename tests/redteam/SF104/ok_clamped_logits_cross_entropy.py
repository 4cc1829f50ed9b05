"""Near miss: the step clamps the *logits* and takes per-token negative log-likelihoods from F.cross_entropy with
reduction="none" (fused, legitimate)."""
import torch
import torch.nn.functional as F


def policy_step(model, sequences, advantages, optimizer):
    logits = model(sequences).logits[..., :-1, :].clamp(-50.0, 50.0)
    labels = sequences[..., 1:]
    nll = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    loss = (advantages[:, None] * nll).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
