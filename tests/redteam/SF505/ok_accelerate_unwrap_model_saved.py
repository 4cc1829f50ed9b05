"""The prepared model is unwrapped before saving, as accelerate's docs say."""
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    optimizer.step()
    optimizer.zero_grad()
accelerator.wait_for_everyone()
unwrapped = accelerator.unwrap_model(model)
torch.save(unwrapped.state_dict(), "final.pt")
