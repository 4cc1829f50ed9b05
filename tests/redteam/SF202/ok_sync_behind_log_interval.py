"""nanoGPT-style barrier and loss read behind the log interval (ok)."""
import time

import torch

t0 = time.time()
for it in range(max_iters):
    x, y = get_batch("train")
    _, loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if it % log_interval == 0:
        torch.cuda.synchronize()
        dt = time.time() - t0
        t0 = time.time()
        print(f"iter {it}: loss {loss.item():.4f}, {dt * 1000:.1f} ms")
