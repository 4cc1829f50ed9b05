"""Mined shape: a module-level full-batch script calls `model.forward(X)` each epoch and appends the loss tensor to `final_losses` (bad)."""
import torch
from torch import nn

X_train = torch.randn(64, 10)
y_train = torch.randint(0, 3, (64,))
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
final_losses = []

for i in range(500):
    y_pred = model.forward(X_train)
    loss = loss_function(y_pred, y_train)
    final_losses.append(loss)  # expect: SF103
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
