"""FGSM adversarial training with Variable(..., requires_grad=True) on the input and .grad read after backward (legitimate)."""
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def adv_train_epoch(model, loader, optimizer, eps=0.03):
    for x, y in loader:
        x_var = Variable(x.cuda(), requires_grad=True)
        loss = F.cross_entropy(model(x_var), y.cuda())
        model.zero_grad()
        loss.backward()
        x_adv = (x_var + eps * x_var.grad.sign()).clamp(0, 1).detach()
        adv_loss = F.cross_entropy(model(x_adv), y.cuda())
        optimizer.zero_grad()
        adv_loss.backward()
        optimizer.step()
