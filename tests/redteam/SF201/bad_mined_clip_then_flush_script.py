"""Mined shape: a module-level epoch loop clips gradients, steps and then calls torch.cuda.empty_cache() for every batch (bad)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(40, 2)).cuda()
loss_func = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters())
tr = []
tr_loss = []

for epoch in range(30):
    model.train()
    per_batch = []
    for i, (x, y) in enumerate(tr):
        optimizer.zero_grad()
        y_hat = model(x.cuda()).squeeze()
        loss = loss_func(y_hat, y.cuda().to(torch.long))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10)
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        per_batch.append(loss.cpu().item() / x.shape[0])
    tr_loss.append(sum(per_batch) / max(len(per_batch), 1))
