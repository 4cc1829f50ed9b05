"""accelerate handles mixed precision (fp32 weights, its own scaler); the model is never cast."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")
model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
