"""Value clipping after the optimizer and scheduler steps."""
import torch
from torch.nn.utils import clip_grad_value_

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    lr_sched.step()
    clip_grad_value_(model.parameters(), clip_value=0.5)  # expect: SF406
