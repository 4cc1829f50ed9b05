"""An RL update loop builds a Lion optimizer per rollout and takes one step with it."""
from lion_pytorch import Lion


def learn(policy, env, rollouts):
    for _ in range(rollouts):
        batch = collect(policy, env)
        optim = Lion(policy.parameters(), lr=1e-4, weight_decay=1e-2)  # expect: SF408
        optim.zero_grad()
        policy.loss(batch).backward()
        optim.step()
