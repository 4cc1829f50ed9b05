"""Script with `import torch as th`: numpy targets become tensors with requires_grad_() and feed only a Huber loss target (bad)."""
import numpy as np
import torch as th

net = th.nn.Sequential(th.nn.Linear(8, 64), th.nn.ReLU(), th.nn.Linear(64, 1))
opt = th.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
X = np.random.randn(1024, 8).astype(np.float32)
Y = np.random.randn(1024, 1).astype(np.float32)

for step in range(200):
    idx = np.random.randint(0, len(X), size=64)
    xb = th.as_tensor(X[idx])
    yb = th.as_tensor(Y[idx]).requires_grad_()  # expect: SF101
    loss = th.nn.functional.huber_loss(net(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
