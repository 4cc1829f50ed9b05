"""PPO with KL early stopping that reverts by reloading saved policy and optimizer state_dicts (snapshot/restore, legitimate)."""
import copy

import torch


def ppo_update(policy, optimizer, minibatches, target_kl=0.02):
    for mb in minibatches:
        policy_state = copy.deepcopy(policy.state_dict())
        optim_state = copy.deepcopy(optimizer.state_dict())
        ratio = (policy.log_prob(mb.obs, mb.act) - mb.logp_old).exp()
        loss = -torch.min(ratio * mb.adv, ratio.clamp(0.8, 1.2) * mb.adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            kl = (mb.logp_old - policy.log_prob(mb.obs, mb.act)).mean().item()
        if kl > 1.5 * target_kl:
            policy.load_state_dict(policy_state)
            optimizer.load_state_dict(optim_state)
            break
