"""DQN loss: Q(s, a) against r + gamma * max Q_target(s', .) from a separate target network (legitimate; not an alias)."""
import torch
import torch.nn.functional as F


def dqn_loss(q_net, target_net, s, a, r, s_next, done, gamma=0.99):
    q_sa = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        q_next = target_net(s_next).max(dim=1).values
        q_target = r + gamma * q_next * (1.0 - done)
    return F.smooth_l1_loss(q_sa, q_target)
