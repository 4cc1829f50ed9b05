"""Hand-written Adam: moment buffers decayed every step and used to move the parameters."""
import torch


def adam(model, loader, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    params = [p for p in model.parameters() if p.requires_grad]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for t, (x, y) in enumerate(loader, start=1):
        model.zero_grad()
        model.loss(x, y).backward()
        with torch.no_grad():
            for mi, vi, p in zip(m, v, params):
                mi.mul_(b1).add_(p.grad, alpha=1 - b1)
                vi.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                p.addcdiv_(mi, vi.sqrt().add_(eps), value=-lr)
