"""Triplet loss where anchor and positive are two crops of the same identity (different tensors from one batch, legitimate)."""
import torch.nn as nn


def reid_step(encoder, optimizer, anchor_imgs, positive_imgs, negative_imgs, margin=0.3):
    triplet = nn.TripletMarginLoss(margin=margin)
    anchor = encoder(anchor_imgs)
    positive = encoder(positive_imgs)
    negative = encoder(negative_imgs)
    loss = triplet(anchor, positive, negative)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
