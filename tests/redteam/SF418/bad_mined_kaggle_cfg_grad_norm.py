"""Mined (competition notebook template, many copies): the clipped norm is kept for the progress line, so the clip runs on every micro-batch; the step runs every `CFG.gradient_accumulation_steps`."""
import torch


class CFG:
    gradient_accumulation_steps = 4
    max_grad_norm = 1000
    print_freq = 100


def train_fn(loader, model, criterion, optimizer, device):
    model.train()
    for step, (images, labels) in enumerate(loader):
        preds = model(images.to(device))
        loss = criterion(preds.view(-1), labels.to(device).view(-1))
        if CFG.gradient_accumulation_steps > 1:
            loss = loss / CFG.gradient_accumulation_steps
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CFG.max_grad_norm)  # expect: SF418
        if (step + 1) % CFG.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        if step % CFG.print_freq == 0:
            print(step, loss.item(), grad_norm)
