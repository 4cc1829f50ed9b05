"""Mined shape: a notebook exported to a script retrains a copied model in a function; each epoch sums
`running_loss = running_loss + loss` after the step, the print that used it is commented out, and the sum is reset
each epoch (bad: one epoch of graphs is kept alive for nothing)."""
import copy

import torch
import torch.nn as nn


# In[11]:


def retrain(base_model, loader, epochs=3, lr=1e-3):
    new_model = copy.deepcopy(base_model)
    optimizer = torch.optim.SGD(new_model.parameters(), lr=lr)
    cross_entropy_loss = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        running_loss = 0
        n_batches = 0
        for i, batch in enumerate(loader, 0):
            inputs, labels = batch
            optimizer.zero_grad()
            outputs = new_model(inputs)
            loss = cross_entropy_loss(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss = running_loss + loss  # expect: SF103
            n_batches = i
        # print("Epoch loss", (running_loss / n_batches).item())
        running_loss = 0
        n_batches = 0
    return new_model
