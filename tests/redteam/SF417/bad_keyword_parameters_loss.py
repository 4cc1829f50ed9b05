"""The loss passed by keyword as parameters=, through a module alias of torch.nn.utils."""
import torch.nn.functional as F
import torch.nn.utils as nnu


def update(actor, critic, batch, optimizer):
    actor_loss = -(actor(batch.obs) * batch.adv).mean()
    critic_loss = F.mse_loss(critic(batch.obs), batch.ret)
    loss = actor_loss + 0.5 * critic_loss
    optimizer.zero_grad()
    loss.backward()
    nnu.clip_grad_norm_(parameters=loss, max_norm=0.5)  # expect: SF417
    optimizer.step()
