"""A critic update through an aliased Adam import: cleared after its backward."""
from torch.optim import Adam as A


class Critic:
    def __init__(self, net):
        self.net = net
        self.optim = A(net.parameters(), lr=1e-3)

    def update(self, target, obs):
        loss = (self.net(obs) - target).pow(2).mean()
        loss.backward()
        self.net.zero_grad()  # expect: SF405
        self.optim.step()
