"""Mined shape: a segmentation epoch builds the mask batch with torch.Tensor(...).to(device), sets `.requires_grad = True` on it, and passes it to the criterion as the target (bad)."""
import numpy as np
import torch


def fit(unet, samples, criterion, optimizer, device, batch_size=4, epochs=2):
    for epoch in range(epochs):
        for start in range(0, len(samples) - batch_size + 1, batch_size):
            images = np.array([samples[j][0] for j in range(start, start + batch_size)], dtype=np.float16)
            masks = np.array([samples[j][1] for j in range(start, start + batch_size)], dtype=np.float16)
            images = torch.Tensor(images).to(device)
            masks = torch.Tensor(masks).to(device)
            images.requires_grad = True
            masks.requires_grad = True  # expect: SF101
            optimizer.zero_grad()
            scores = unet(images)
            loss = criterion(scores, masks)
            loss.backward()
            optimizer.step()
