"""build_verify entries whose step runs the optimizer in ways a plain `optimizer.step()` does not:
a closure (LBFGS; Lightning's automatic optimization does the same), and several optimizer steps per
verify step (PPO epochs)."""

import torch


def lbfgs(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4, history_size=3)
    x = torch.randn(32, 4, device=device)
    y = x[:, :1] * 2 - x[:, 1:2]

    def step():
        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        return optimizer.step(closure)

    return model, optimizer, step


def ppo_spike(device):
    """Four minibatch steps per verify step; the first one's gradient is huge, the last one's small."""
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).to(device)
    optimizer = torch.optim.SGD(policy.parameters(), lr=1e-6)

    def step():
        obs = torch.randn(64, 6, device=device)
        actions = torch.randint(0, 3, (64,), device=device)
        advantages = torch.randn(64, device=device)
        for minibatch in range(4):
            rows = slice(minibatch * 16, (minibatch + 1) * 16)
            scale = 1000.0 if minibatch == 0 else 1.0
            logp = torch.log_softmax(policy(obs[rows] * scale), dim=-1)
            loss = -(logp[torch.arange(16), actions[rows]] * advantages[rows]).mean() * scale
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss

    return policy, optimizer, step


class ActorCritic(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = torch.nn.Linear(6, 3)
        self.critic = torch.nn.Linear(6, 1)


def ppo_nan(device):
    """The critic's gradient is NaN in the first minibatch step of every verify step (a NaN return),
    finite in the second; the step returns the actor's loss, which stays finite."""
    torch.manual_seed(0)
    model = ActorCritic().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        obs = torch.randn(16, 6, device=device)
        returns = torch.randn(16, 1, device=device)
        for minibatch in range(2):
            target = returns if minibatch else returns * float("nan")
            # a linear value loss: its gradient is the target, whatever the critic outputs
            value_loss = -(model.critic(obs) * target).mean()
            actor_loss = -torch.log_softmax(model.actor(obs), dim=-1)[:, 0].mean()
            optimizer.zero_grad()
            (value_loss + actor_loss).backward()
            optimizer.step()
        return actor_loss

    return model, optimizer, step
