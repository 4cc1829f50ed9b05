"""Mined (chinese GPT-2 fine-tuning script): the clip sits with each backward branch (apex or plain), so it runs on every micro-batch; the step and the scheduler run every `gradient_accumulation`."""
import torch
from apex import amp


def train(model, batches, optimizer, scheduler, fp16, gradient_accumulation, max_grad_norm, device):
    for step in range(len(batches)):
        ids, labels = batches[step]
        outputs = model.forward(input_ids=ids.to(device), labels=labels.to(device))
        loss = outputs[0]
        if gradient_accumulation > 1:
            loss = loss / gradient_accumulation
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_grad_norm)  # expect: SF418
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # expect: SF418
        if (step + 1) % gradient_accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()
