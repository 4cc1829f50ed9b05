"""Gatys style transfer: the image being optimised requires grad and is given to LBFGS; targets are detached features (legitimate)."""
import torch
import torch.nn.functional as F


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


def stylise(features, content, style, steps=300, style_weight=1e6):
    content_t = features(content)[-1].detach()
    style_t = [gram(f).detach() for f in features(style)]
    img = content.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([img])

    def closure():
        opt.zero_grad()
        feats = features(img)
        loss = F.mse_loss(feats[-1], content_t)
        loss = loss + style_weight * sum(F.mse_loss(gram(f), g) for f, g in zip(feats, style_t))
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return img.detach()
