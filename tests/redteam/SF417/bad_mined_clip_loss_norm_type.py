"""Mined (tabular classifier script): clip_grad_norm_ handed the loss with norm_type=2 after backward."""
import torch


def train(model, loader, loss_fn, optimizer):
    model.train()
    for features, label_data in loader:
        pred = model(features)
        loss = loss_fn(pred, label_data)
        print(f"train loss: {loss.item()}")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(loss, max_norm=1.0, norm_type=2)  # expect: SF417
        optimizer.step()
        optimizer.zero_grad()
