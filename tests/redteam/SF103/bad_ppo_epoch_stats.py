"""PPO update keeps the value loss tensor of every minibatch for logging."""
import torch


class PPO:
    def __init__(self, actor_critic, optimizer):
        self.actor_critic = actor_critic
        self.optimizer = optimizer
        self.value_losses = []

    def update(self, rollouts, epochs):
        for _ in range(epochs):
            for obs, returns, old_logp, actions, adv in rollouts.minibatches():
                logp, values = self.actor_critic.evaluate(obs, actions)
                ratio = torch.exp(logp - old_logp)
                policy_loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
                value_loss = (returns - values).pow(2).mean()
                self.optimizer.zero_grad()
                (policy_loss + 0.5 * value_loss).backward()
                self.optimizer.step()
                self.value_losses.append(value_loss)  # expect: SF103
