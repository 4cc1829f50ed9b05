"""accelerate loop: a dict of running metrics gets the raw loss each step."""
from accelerate import Accelerator


def train(model, optimizer, dataloader):
    accelerator = Accelerator()
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    stats = {"loss": 0.0, "steps": 0}
    for batch in dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        stats["loss"] += loss  # expect: SF103
        stats["steps"] += 1
    return stats
