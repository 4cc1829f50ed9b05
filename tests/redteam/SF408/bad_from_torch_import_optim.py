"""`from torch import optim`: a new Adagrad each batch."""
from torch import optim

for x, y in loader:
    optimizer = optim.Adagrad(net.parameters(), lr=0.01)  # expect: SF408
    optimizer.zero_grad()
    loss_fn(net(x), y).backward()
    optimizer.step()
