"""Mined (segmentation + classification trainer): a polynomial learning rate applied by building a new Adam on every batch."""
from torch import optim


def poly_lr(base, step, total, power):
    return base * (1 - step / total) ** power


def train(net, loader, seg_criterion, cls_criterion, start_lr, n_images, alpha=0.4, power=0.9):
    steps = 0
    for x, y, y_cls in loader:
        steps += x.shape[0]
        lr = poly_lr(start_lr, steps, n_images, power)
        optimizer = optim.Adam(net.parameters(), lr=lr)  # expect: SF408
        optimizer.zero_grad()
        out, out_cls = net(x)
        loss = seg_criterion(out, y) + alpha * cls_criterion(out_cls, y_cls)
        loss.backward()
        optimizer.step()
