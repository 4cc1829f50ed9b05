"""An optimizer passed in and a model the file does not tie to it."""


def step(policy, value_net, optimizer, loss):
    loss.backward()
    value_net.zero_grad()
    optimizer.step()
