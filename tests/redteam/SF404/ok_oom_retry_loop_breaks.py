"""An out-of-memory retry loop around one step; the batch loop clears the gradients."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
    optimizer.zero_grad(set_to_none=True)
    while True:
        try:
            model(batch).mean().backward()
            optimizer.step()
            break
        except torch.cuda.OutOfMemoryError:
            batch = batch[: len(batch) // 2]
