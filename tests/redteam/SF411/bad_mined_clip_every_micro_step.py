"""Mined (embedding classifier trainer): BCE-with-logits loss undivided, the clip runs on every micro-step, the step every `accum_steps`."""
import torch


def train_iters(classifier, batches, optimizer, scheduler, device, accum_steps=4):
    criterion = torch.nn.BCEWithLogitsLoss()
    classifier.train()
    for iteration, (emb, mask, labels) in enumerate(batches):
        logits = classifier(emb.to(device), mask=mask.to(device))
        loss = criterion(logits.flatten(), labels.float().to(device))
        loss.backward()  # expect: SF411
        torch.nn.utils.clip_grad_norm_(classifier.parameters(), 1.0)
        if (iteration + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            if scheduler is not None:
                scheduler.step()
