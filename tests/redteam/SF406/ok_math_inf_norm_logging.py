"""After the step, `clip_grad_norm_(params, math.inf)` only reads the norm for a log."""
import math
import torch

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in loader:
    optimizer.zero_grad()
    model(x).mean().backward()
    optimizer.step()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)
    logger.log(grad_norm=grad_norm)
