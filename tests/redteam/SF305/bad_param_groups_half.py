"""Discriminative learning rates: param groups over submodules of a model cast whole to half."""
import torch


def fit(model, loader, epochs=3):
    model = model.cuda().half()  # expect: SF305
    groups = [
        {"params": model.encoder.parameters(), "lr": 1e-5},
        {"params": model.head.parameters(), "lr": 1e-3},
    ]
    optimizer = torch.optim.AdamW(groups)
    for _ in range(epochs):
        for batch in loader:
            out = model(batch["input_ids"].cuda(), attention_mask=batch["mask"].cuda())
            loss = out.loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
