"""Two functions each define their own `setup`: the one in `pretrain` returns an optimizer, the one in
`rollout` an environment, stepped after a saliency backward (gradients of the input, no optimizer). Which
`setup` a call runs is the one its scope binds, not any function of that name: `env.step()` steps no
optimizer, so no `zero_grad` is missing (near miss)."""
import torch


class Env:
    def __init__(self, seed):
        self.seed = seed

    def step(self):
        self.seed += 1
        return torch.randn(4)


def pretrain(net, loader):
    def setup(model):
        return torch.optim.Adam(model.parameters(), lr=1e-3)

    opt = setup(net)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        opt.step()


def rollout(policy, episodes):
    def setup(seed):
        return Env(seed)

    env = setup(0)
    saliency = []
    for _ in range(episodes):
        obs = env.step().requires_grad_()
        policy(obs).max().backward()
        saliency.append(obs.grad.abs())
        env.step()
    return saliency
