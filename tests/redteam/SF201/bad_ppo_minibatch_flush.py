"""PPO update: empty_cache() after every minibatch gradient step inside the update epochs (bad)."""
import torch


def ppo_update(agent, optimizer, buffer, n_epochs=4, minibatch=256, clip=0.2):
    for _ in range(n_epochs):
        for mb in buffer.iterate(minibatch):
            logp, value, entropy = agent.evaluate(mb.obs, mb.actions)
            ratio = (logp - mb.old_logp).exp()
            pg = -torch.min(ratio * mb.adv, ratio.clamp(1 - clip, 1 + clip) * mb.adv).mean()
            loss = pg + 0.5 * (value - mb.returns).pow(2).mean() - 0.01 * entropy.mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()
            torch.cuda.empty_cache()  # expect: SF201
