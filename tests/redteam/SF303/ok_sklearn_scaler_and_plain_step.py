"""A feature scaler named `scaler` and a plain optimizer step."""
import torch
from sklearn.preprocessing import MinMaxScaler

scaler = MinMaxScaler()
for x, y in loader:
    x = torch.tensor(scaler.fit_transform(x))
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
