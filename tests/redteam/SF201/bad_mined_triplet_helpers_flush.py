"""Mined shape: a metric-learning epoch runs the forward through a same-file helper, clips through another helper, steps and empties the cache on every batch (bad)."""
import torch


def forward_triplet(model, batch):
    anchor, positive, negative = batch
    return model(anchor), model(positive), model(negative)


def clip_all(optimizer, bound):
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.data.clamp_(-bound, bound)


def run_epoch(model, loader, optimizer, margin_loss):
    for batch in loader:
        optimizer.zero_grad()
        emb_a, emb_p, emb_n = forward_triplet(model, batch)
        loss = margin_loss(emb_a, emb_p, emb_n)
        loss.backward()
        clip_all(optimizer, 1.0)
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
