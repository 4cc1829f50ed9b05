"""A fine-tuning script: warm-up scheduler and clip both run on every micro-batch, the step every N."""
import torch
from torch.nn.utils import clip_grad_norm_
from transformers import get_cosine_schedule_with_warmup

model = build_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=200, num_training_steps=5000)
grad_accum = 16
for step, batch in enumerate(train_loader):
    outputs = model(**batch)
    (outputs.loss / grad_accum).backward()
    clip_grad_norm_(model.parameters(), 1.0)  # expect: SF418
    lr_scheduler.step()  # expect: SF418
    if (step + 1) % grad_accum == 0:
        optimizer.step()
        optimizer.zero_grad()
