"""Near miss: the notebook function sums the losses of one sequence's time steps and backpropagates the sum once per
batch (the sum *is* the objective, legitimate)."""
import torch
import torch.nn as nn


# In[11]:


def retrain(model, loader, epochs=3, lr=1e-3):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            running_loss = 0.0
            for t in range(x.size(1)):
                running_loss = running_loss + loss_fn(model(x[:, t]), y[:, t])
            running_loss = running_loss / x.size(1)
            history.append(running_loss.item())
            optimizer.zero_grad()
            running_loss.backward()
            optimizer.step()
    return history
