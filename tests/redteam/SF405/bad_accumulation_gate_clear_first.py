"""At the accumulation boundary, the clear runs before the step."""
import torch

optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
for step, batch in enumerate(loader):
    loss = model(**batch).loss / grad_accum
    loss.backward()
    if (step + 1) % grad_accum == 0:
        optimizer.zero_grad()  # expect: SF405
        optimizer.step()
        scheduler.step()
