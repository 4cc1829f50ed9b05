"""Music transcription: scheduler step, then an optional clip, all after the optimizer step."""
import torch
from torch.nn.utils import clip_grad_norm_

optimizer = torch.optim.Adam(model.parameters(), lr=6e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1000, gamma=0.98)
for i, batch in zip(range(iterations), cycle(loader)):
    predictions, losses = model.run_on_batch(batch)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if clip_gradient_norm:
        clip_grad_norm_(model.parameters(), clip_gradient_norm)  # expect: SF406
