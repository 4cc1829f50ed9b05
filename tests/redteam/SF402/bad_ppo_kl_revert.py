"""PPO epoch with KL early stopping that 'reverts' the last Adam update by adding lr * grad back (bad)."""
import torch


def ppo_epoch(policy, optimizer, minibatches, lr, target_kl=0.02):
    for mb in minibatches:
        logp = policy.log_prob(mb.obs, mb.act)
        ratio = (logp - mb.logp_old).exp()
        loss = -torch.min(ratio * mb.adv, ratio.clamp(0.8, 1.2) * mb.adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        approx_kl = (mb.logp_old - policy.log_prob(mb.obs, mb.act)).mean().item()
        if approx_kl > 1.5 * target_kl:
            with torch.no_grad():
                for p in policy.parameters():
                    p.data.add_(p.grad.data, alpha=lr)  # expect: SF402
            break
