"""`type(torch.half)` on a policy network trained by an RL update loop, torch imported under an alias."""
import torch as th

policy = PolicyNet(obs_dim=8, act_dim=4)
policy.type(th.half)  # expect: SF305
pi_opt = th.optim.Adam(policy.parameters(), lr=3e-4)
for update in range(1000):
    batch = buffer.sample(256)
    logp = policy.log_prob(batch.obs.half(), batch.act)
    loss = -(logp * batch.adv.half()).mean()
    pi_opt.zero_grad()
    loss.backward()
    pi_opt.step()
