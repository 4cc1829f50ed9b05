"""Federated client optimizer: local epochs with clipping after each step."""
import copy
import torch


class ClientOptim:
    def __init__(self, model, loss_fn, cfg):
        self.model = model
        self.loss_fn = loss_fn
        self.cfg = cfg

    def update(self, dataloader):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=self.cfg.lr)
        for _ in range(self.cfg.local_epochs):
            for data, target in dataloader:
                optimizer.zero_grad()
                loss = self.loss_fn(self.model(data), target)
                loss.backward()
                optimizer.step()
                if self.cfg.clip_grad:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_value, norm_type=self.cfg.clip_norm)  # expect: SF406
        return copy.deepcopy(self.model.state_dict())
