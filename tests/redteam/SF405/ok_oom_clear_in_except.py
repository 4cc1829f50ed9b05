"""An out-of-memory batch is skipped: the clear is in the except handler, which continues."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
    try:
        loss = model(batch).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        continue
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
