"""PGD attack class: the perturbed input requires grad and its gradient is taken with torch.autograd.grad (legitimate adversarial input)."""
import torch
import torch.nn as nn


class PGD:
    def __init__(self, model, eps=8 / 255, alpha=2 / 255, steps=10):
        self.model = model
        self.eps, self.alpha, self.steps = eps, alpha, steps
        self.loss = nn.CrossEntropyLoss()

    def __call__(self, images, labels):
        adv = images.clone().detach() + torch.empty_like(images).uniform_(-self.eps, self.eps)
        for _ in range(self.steps):
            adv.requires_grad = True
            cost = self.loss(self.model(adv), labels)
            grad = torch.autograd.grad(cost, adv, retain_graph=False, create_graph=False)[0]
            adv = adv.detach() + self.alpha * grad.sign()
            delta = torch.clamp(adv - images, min=-self.eps, max=self.eps)
            adv = torch.clamp(images + delta, 0, 1).detach()
        return adv
