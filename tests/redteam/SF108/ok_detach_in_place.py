"""`hidden.detach_()` at the top of each iteration (correct)."""


def train(model, loader, crit, opt, hidden):
    for x, y in loader:
        hidden.detach_()
        out, hidden = model(x, hidden)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
