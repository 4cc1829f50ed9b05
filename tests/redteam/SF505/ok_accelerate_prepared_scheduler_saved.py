"""The prepared scheduler's and optimizer's state dicts are saved (no `module.` prefix there); the model goes through get_state_dict."""
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model, optimizer, scheduler, loader = accelerator.prepare(model, optimizer, scheduler, loader)
for batch in loader:
    accelerator.backward(model(**batch).loss)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
torch.save({"model": accelerator.get_state_dict(model), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict()}, "state.pt")
