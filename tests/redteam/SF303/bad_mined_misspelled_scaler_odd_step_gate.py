"""Mined (text classifier): the scaler is a name spelled `scalar`, legacy autocast, clip, then a scaler step behind an odd/even gate."""
import torch


def train_fn(model, loader, optimizer, scalar, max_norm, loss_of):
    model.train()
    for index, batch in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            logits = model(batch["x"])
            loss = loss_of(logits, batch["label"])
        scalar.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # expect: SF303
        if (index + 1) % 2:
            scalar.step(optimizer)
            scalar.update()
