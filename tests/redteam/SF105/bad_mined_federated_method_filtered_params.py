"""Mined shape: a federated client's method allocates zeros_like for each trainable parameter, adds a detached clone
of every gradient after each local batch over all local epochs, and returns the averages; the caller only flattens
them to encrypt (bad: one extra model copy on the accelerator for the whole local round)."""
import torch


class FederatedClient:
    def __init__(self, model, lr, local_epochs):
        self.model = model
        self.lr = lr
        self.local_epochs = local_epochs

    def _local_gradients(self, loader):
        params = [p for p in self.model.parameters() if p.requires_grad]
        grads = [torch.zeros_like(p) for p in params]  # expect: SF105
        opt = torch.optim.SGD(params, lr=self.lr)
        loss_fn = torch.nn.MSELoss()
        for _ in range(self.local_epochs):
            for states, targets in loader:
                loss = loss_fn(self.model(states), targets)
                opt.zero_grad()
                loss.backward()
                for g, p in zip(grads, params):
                    g += p.grad.detach().clone()
                opt.step()
        return [g / len(loader) for g in grads]

    def encrypted_update(self, loader, encrypt):
        grads = self._local_gradients(loader)
        flat = torch.cat([g.view(-1) for g in grads])
        return encrypt(flat.tolist())
