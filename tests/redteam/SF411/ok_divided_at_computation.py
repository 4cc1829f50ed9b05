"""The loss is divided by the accumulation count where it is computed (correct)."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for i, batch in enumerate(loader):
    loss = model(**batch).loss / gradient_accumulation_steps
    loss.backward()
    if (i + 1) % gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
