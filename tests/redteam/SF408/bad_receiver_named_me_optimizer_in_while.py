"""A solver whose methods call the instance `me` rebuilds `me.optimizer` on every pass of its while loop, so Adam's
moments restart each pass (bad: the receiver is not `self`)."""
from torch import optim


class Solver:
    def __init__(me, net, lr):
        me.net = net
        me.lr = lr

    def solve(me, batches, tol):
        change = float("inf")
        while change > tol:
            me.optimizer = optim.Adam(me.net.parameters(), lr=me.lr)  # expect: SF408
            me.optimizer.zero_grad()
            loss = me.net.energy(next(batches))
            loss.backward()
            me.optimizer.step()
            change = loss.item()
