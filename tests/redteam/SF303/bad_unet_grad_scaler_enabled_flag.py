"""Segmentation training script: the scaler is built with an `enabled=amp` flag and the clip runs on scaled gradients."""
import torch
import torch.nn.functional as F


def train_model(model, train_loader, device, learning_rate, amp, gradient_clipping=1.0):
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=1e-8, momentum=0.999)
    grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
    for images, true_masks in train_loader:
        images = images.to(device)
        with torch.autocast(device.type, enabled=amp):
            masks_pred = model(images)
            loss = F.cross_entropy(masks_pred, true_masks)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)  # expect: SF303
        grad_scaler.step(optimizer)
        grad_scaler.update()
