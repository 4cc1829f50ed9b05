"""Decoupled backward through a detached feature: the copy's gradient is handed back (correct)."""


def split_backward(trunk, head, crit, x, y, opt):
    feats = trunk(x)
    feats_d = feats.detach().requires_grad_(True)
    loss = crit(head(feats_d), y)
    loss.backward()
    feats.backward(feats_d.grad)
    opt.step()
