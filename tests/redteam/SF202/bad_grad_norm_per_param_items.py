"""per-parameter gradient norms read with .item() inside fit_batch, every step (bad)."""
import torch


class Trainer:
    def fit_batch(self, batch):
        preds = self.net(batch["x"].to(self.device))
        loss = self.crit(preds, batch["y"].to(self.device))
        loss.backward()
        norms = {}
        for n, p in self.net.named_parameters():
            if p.grad is not None:
                norms[n] = p.grad.detach().norm(2).item()  # expect: SF202
        self.opt.step()
        self.opt.zero_grad()
        self.history.append(norms)
