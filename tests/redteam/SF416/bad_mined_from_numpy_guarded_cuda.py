"""A regression script converting numpy arrays each epoch and moving them behind a CUDA check, discarding the copy."""
import numpy as np
import torch
import torch.nn as nn

x_train = np.random.rand(64, 1).astype(np.float32)
y_train = (3 * x_train + 1).astype(np.float32)
model = nn.Linear(1, 1)
if torch.cuda.is_available():
    model.cuda()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(10):
    inputs = torch.from_numpy(x_train)
    targets = torch.from_numpy(y_train)
    if torch.cuda.is_available():
        inputs.cuda()  # expect: SF416
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
