"""Integrated-gradients style attribution: the input is made to require grad, the loss is backpropagated
and the input's gradient is read."""
import torch.nn.functional as F


def attribution(model, images, labels):
    images = images.clone()
    images.requires_grad = True
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    return (images.grad * images).sum(dim=1)
