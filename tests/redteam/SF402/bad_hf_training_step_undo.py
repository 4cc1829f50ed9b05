"""HF Trainer subclass stepping self.optimizer inside training_step and then undoing it with `p.data += lr * p.grad` (bad)."""
import torch
from transformers import Trainer


class InfluenceTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            probe = self.compute_loss(model, self.probe_batch).item()
            for p in model.parameters():
                if p.grad is not None:
                    p.data += self.args.learning_rate * p.grad  # expect: SF402
        self.optimizer.zero_grad()
        self.probe_scores.append(probe)
        return loss.detach()
