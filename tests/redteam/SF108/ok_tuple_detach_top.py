"""`(h, c)` re-created from detached tensors at the top of each iteration (correct)."""


def train(lstm, head, loader, crit, opt, h, c):
    for x, y in loader:
        h, c = h.detach(), c.detach()
        out, (h, c) = lstm(x, (h, c))
        loss = crit(head(out), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
