"""The clip inside an LBFGS closure runs before the step uses the gradients."""
import torch

optimizer = torch.optim.LBFGS(model.parameters(), lr=1)
for x, y in loader:
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        return loss
    optimizer.step(closure)
