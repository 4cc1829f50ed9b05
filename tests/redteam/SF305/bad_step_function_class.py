"""A learner whose setup method casts the network; a separate method takes the optimizer step."""
import torch


class Learner:
    def setup(self, net):
        self.net = net
        self.net.half()  # expect: SF305
        self.optim = torch.optim.SGD(self.net.parameters(), lr=0.01)

    def train_batch(self, x, y):
        pred = self.net(x.half())
        loss = torch.nn.functional.mse_loss(pred, y.half())
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
