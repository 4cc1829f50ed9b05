"""Gradient norms are logged after backward, then the gradients are cleared before the step."""
import torch

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss.backward()
    if step % 50 == 0:
        logger.log({"grad_norm": grad_norm(model)})
    optimizer.zero_grad(set_to_none=True)  # expect: SF405
    optimizer.step()
