"""Style transfer: a new LBFGS per octave over a freshly resized image."""
import torch

for size in octaves:
    image = resize(image.detach(), size).requires_grad_(True)
    optimizer = torch.optim.LBFGS([image])
    for _ in range(steps_per_octave):
        def closure():
            optimizer.zero_grad()
            loss = style_loss(image)
            loss.backward()
            return loss
        optimizer.step(closure)
