"""Near miss: the logging window sums `loss.item()` floats and is reset at each print (legitimate)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.GRU(16, 32, batch_first=True)
head = nn.Linear(32, 4)
optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)


def train(loader, log_interval=20):
    model.train()
    window = 0.0
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        output, _ = model(data.float())
        loss = F.cross_entropy(head(output[:, -1]), target.long())
        loss.backward()
        optimizer.step()
        window += loss.item()
        if batch_idx > 0 and batch_idx % log_interval == 0:
            print(batch_idx, window / log_interval)
            window = 0.0
