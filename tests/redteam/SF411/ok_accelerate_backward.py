"""accelerate's `accelerator.backward(loss)` divides by the accumulation steps itself (correct)."""
from accelerate import Accelerator

accelerator = Accelerator(gradient_accumulation_steps=8)
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    accelerator.backward(loss)
    if (step + 1) % 8 == 0:
        optimizer.step()
        optimizer.zero_grad()
