"""Soft actor-critic critic update over replay samples; the critic's optimizer is never cleared."""
import torch
import torch.nn.functional as F


class SAC:
    def __init__(self, critic, actor, lr):
        self.critic = critic
        self.actor = actor
        self.critic_optimizer = torch.optim.Adam(critic.parameters(), lr=lr)

    def train(self, replay_buffer, iterations, batch_size=256):
        for it in range(iterations):
            state, action, reward, next_state, done = replay_buffer.sample(batch_size)
            with torch.no_grad():
                target_q = reward + (1 - done) * 0.99 * self.critic(next_state, self.actor(next_state)).min(0).values
            current_q1, current_q2 = self.critic(state, action)
            critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
            critic_loss.backward()
            self.critic_optimizer.step()  # expect: SF404
