"""A runner class from an installed toolkit; its inherited `set_seed` is not visible, so the name breaks the tie."""
import torch
from toolkit.runners import BaseRunner


class Runner(BaseRunner):
    def run(self, data, seed):
        self.set_seed(seed)
        net = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        for x, y in data:
            opt.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            opt.step()


if __name__ == "__main__":
    Runner().run(data, 3)
