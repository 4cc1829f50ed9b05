"""Super-resolution with a perceptual loss: every VGG feature map of the HR image is marked requires_grad_() in a list before the L1 targets (bad)."""
import torch
import torch.nn.functional as F


def perceptual_step(sr_net, vgg_layers, lr_img, hr_img, optimizer):
    sr = sr_net(lr_img)
    with torch.no_grad():
        hr_feats = [layer(hr_img) for layer in vgg_layers]
    hr_feats = [f.requires_grad_() for f in hr_feats]  # expect: SF101
    sr_feats = [layer(sr) for layer in vgg_layers]
    loss = F.l1_loss(sr, hr_img)
    for a, b in zip(sr_feats, hr_feats):
        loss = loss + 0.1 * F.l1_loss(a, b)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
