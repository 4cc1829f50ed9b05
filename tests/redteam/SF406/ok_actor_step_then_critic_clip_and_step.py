"""Actor steps, then the critic's gradients are clipped before the critic steps."""
import torch

actor_opt = torch.optim.Adam(actor.parameters())
critic_opt = torch.optim.Adam(critic.parameters())
for batch in buffer:
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    (actor_loss(batch) + critic_loss(batch)).backward()
    actor_opt.step()
    torch.nn.utils.clip_grad_norm_(critic.parameters(), 0.5)
    critic_opt.step()
