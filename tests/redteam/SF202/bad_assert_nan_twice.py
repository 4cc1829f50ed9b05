"""two NaN/Inf asserts per training iteration (bad)."""
import torch


def training_iteration(encoder, head, optimizer, images, labels):
    feats = encoder(images.cuda())
    assert not torch.isnan(feats).any(), "features went NaN"  # expect: SF202
    logits = head(feats)
    loss = torch.nn.functional.cross_entropy(logits, labels.cuda())
    assert torch.isfinite(loss).all(), "loss went non-finite"  # expect: SF202
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
