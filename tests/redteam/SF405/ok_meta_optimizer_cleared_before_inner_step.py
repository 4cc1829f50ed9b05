"""Meta-learning: the meta optimizer is cleared between the inner backward and the inner step."""
import torch

meta_opt = torch.optim.Adam(meta_model.parameters(), lr=1e-3)
for task in tasks:
    inner_opt = torch.optim.SGD(learner.parameters(), lr=0.1)
    inner_loss = task.loss(learner)
    inner_loss.backward()
    meta_opt.zero_grad()
    inner_opt.step()
