"""A torchtune-style recipe: the running loss is all-reduced and logged at each optimizer step, then reset."""
import torch.distributed as dist


class Recipe:
    def __init__(self, model, optimizer, loss_fn, accum_steps):
        self._model = model
        self._optimizer = optimizer
        self._loss_fn = loss_fn
        self._accum_steps = accum_steps

    def train(self, dataloader, epochs):
        running_loss = 0
        for epoch in range(epochs):
            for idx, batch in enumerate(dataloader):
                labels = batch.pop("labels")
                current_loss = self._loss_fn(self._model(**batch), labels)
                running_loss += current_loss
                current_loss.backward()
                if (idx + 1) % self._accum_steps == 0:
                    dist.all_reduce(running_loss)
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    print(f"{epoch}|{idx}|Loss: {running_loss.item():.4f}")
                    running_loss = 0
