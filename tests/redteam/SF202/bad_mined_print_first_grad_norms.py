"""Mined shape: a captioning training loop prints `.grad.norm().item()` for the first parameters on every step, between clipping and the optimizer step (bad)."""
import torch


def train(model, loader, optimizer, scheduler, epochs, device="cuda"):
    for epoch in range(epochs):
        for imgs, text, text_labels in loader:
            imgs, text, text_labels = imgs.to(device), text.to(device), text_labels.to(device)
            total_loss, contrastive_loss, generative_loss = model(imgs, text, text_labels)
            total_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5)
            shown = 0
            for name, param in model.named_parameters():
                if param.grad is not None:
                    print(f"{name}: grad norm = {param.grad.norm().item():.4f}")  # expect: SF202
                shown += 1
                if shown > 10:
                    break
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
