"""Virtual adversarial training: the random direction d requires grad, the KL to the clean prediction is backpropagated and d.grad read (legitimate)."""
import torch
import torch.nn.functional as F


def vat_loss(model, x, xi=1e-6, eps=2.0):
    with torch.no_grad():
        pred = F.softmax(model(x), dim=1)
    d = torch.randn_like(x)
    d = d / d.flatten(1).norm(dim=1).view(-1, 1, 1, 1)
    d.requires_grad_()
    adv_distance = F.kl_div(F.log_softmax(model(x + xi * d), dim=1), pred, reduction="batchmean")
    adv_distance.backward()
    d = d.grad.detach()
    model.zero_grad()
    r_adv = eps * d / d.flatten(1).norm(dim=1).view(-1, 1, 1, 1)
    return F.kl_div(F.log_softmax(model(x + r_adv), dim=1), pred, reduction="batchmean")
