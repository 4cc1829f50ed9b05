"""MXNet Gluon: `backward()` overwrites the gradients (grad_req='write'), no clear is needed."""
from mxnet import autograd, gluon


def fit(net, train_iter, loss_fn, lr):
    optim = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    for X, y in train_iter:
        with autograd.record():
            loss = loss_fn(net(X), y)
        loss.backward()
        optim.step(X.shape[0])
