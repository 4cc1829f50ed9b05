"""accelerate loop timing every step behind torch.cuda.synchronize() (bad)."""
import time

import torch
from accelerate import Accelerator

accelerator = Accelerator()
model, optim, loader = accelerator.prepare(model, optim, loader)
for batch_index, batch in enumerate(loader):
    start = time.perf_counter()
    with accelerator.accumulate(model):
        out = model(**batch)
        accelerator.backward(out.loss)
        optim.step()
        optim.zero_grad()
    torch.cuda.synchronize()  # expect: SF202
    step_seconds = time.perf_counter() - start
