"""Gradient w.r.t. a re-leafed embedding taken with `torch.autograd.grad` (correct)."""
import torch


def embedding_saliency(embed, model, crit, tokens, labels):
    emb = embed(tokens).detach().requires_grad_(True)
    loss = crit(model(inputs_embeds=emb), labels)
    (g,) = torch.autograd.grad(loss, emb)
    return g.norm(dim=-1)
