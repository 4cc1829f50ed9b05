"""DDP GPT trainer: `_run_batch` scales the loss on self.scaler and clips before the scaler step."""
import torch


class Trainer:
    def __init__(self, model, optimizer, config):
        self.model = model
        self.optimizer = optimizer
        self.config = config
        self.scaler = torch.cuda.amp.GradScaler() if config.use_amp else None

    def _run_batch(self, source, targets, train: bool = True):
        with torch.set_grad_enabled(train), torch.amp.autocast(device_type="cuda", dtype=torch.float16):
            _, loss = self.model(source, targets)
        if train:
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)  # expect: SF303
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.item()
