"""`nn.LogSoftmax` output into `nn.CrossEntropyLoss`: same loss values, left alone (idempotent)."""
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 4), nn.LogSoftmax(dim=1))
criterion = nn.CrossEntropyLoss()
loss = criterion(model(x), y)
