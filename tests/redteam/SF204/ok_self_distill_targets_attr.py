"""self-training: pseudo-labels generated each step are stored on the trainer and trained on next step (ok)."""
import torch


class SelfTrainer:
    def train_step(self, batch):
        with torch.no_grad():
            self.pseudo = self.teacher.generate(batch["input_ids"], max_length=32)
        out = self.student(input_ids=batch["input_ids"], labels=batch["labels"])
        out.loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
