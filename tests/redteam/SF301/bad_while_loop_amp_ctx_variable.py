"""A while loop with the autocast context built once and entered every iteration."""
import torch

ctx = torch.autocast(device_type="cuda", dtype=torch.float16)  # expect: SF301
it = 0
while it < max_iters:
    x, y = get_batch("train")
    with ctx:
        logits, loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    it += 1
