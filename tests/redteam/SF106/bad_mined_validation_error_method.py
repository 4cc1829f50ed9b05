"""Mined shape: a trainer's `_validation_error` method switches `self.model` to eval and runs it (or a custom loss that runs it) over the validation loader with autograd on (bad)."""
import torch


class SupervisedTrainer:
    def __init__(self, model, loss, optimizer, val_loader, custom_eval=False, device="cuda"):
        self.model = model.to(device)
        self.loss = loss
        self.optimizer = optimizer
        self.val_loader = val_loader
        self.custom_eval = custom_eval
        self.device = device

    def _train_batch(self, batch_x, batch_y):
        out = self.model(batch_x.to(self.device))
        loss = self.loss(out, batch_y.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss

    def _validation_error(self):
        running = 0.0
        self.model.eval()
        for batch_x, batch_y in self.val_loader:
            batch_x, batch_y = batch_x.to(self.device), batch_y.to(self.device)
            if self.custom_eval:
                val_loss, _ = self.loss((batch_x, batch_y), self.model)
            else:
                output = self.model(batch_x)  # expect: SF106
                val_loss = self.loss(output, batch_y)
            running += val_loss.item()
        return running / max(len(self.val_loader), 1)
