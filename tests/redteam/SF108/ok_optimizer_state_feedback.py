"""A counter and a Python float fed back each iteration are not tensors with graphs (correct)."""


def train(model, loader, opt, crit):
    running = 0.0
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running = max(running, loss.item())
