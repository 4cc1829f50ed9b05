"""Mined (regression competition notebook): AMP backward, the clip on every micro-batch, scaler step and per-batch scheduler under the accumulation gate."""
import torch


def train_fn(cfg, loader, model, criterion, optimizer, scheduler, scaler, device):
    model.train()
    for step, (inputs, labels) in enumerate(loader):
        with torch.autocast("cuda", enabled=cfg.apex):
            preds = model(inputs.to(device))
        loss = criterion(preds.view(-1, 1), labels.to(device).view(-1, 1))
        if cfg.gradient_accumulation_steps > 1:
            loss = loss / cfg.gradient_accumulation_steps
        scaler.scale(loss).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)  # expect: SF418
        if (step + 1) % cfg.gradient_accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            if cfg.batch_scheduler:
                scheduler.step()
    return grad_norm
