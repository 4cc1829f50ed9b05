"""ok saliency map."""
import torch


def saliency(model, image, label):
    model.eval()
    image = image.clone().requires_grad_(True)
    score = model(image)[0, label]
    score.backward()
    return image.grad.abs().amax(1)
