"""Near miss: the same epoch adds `outputs[0].item()` (a Python float) and keeps the loss tensor only for backward
(legitimate)."""
from torch.utils.data import DataLoader, RandomSampler


def train_epoch(model, dataset, adjacency, optimizer, batch_size, collate):
    loader = DataLoader(dataset, sampler=RandomSampler(dataset), batch_size=batch_size, collate_fn=collate)
    train_loss = 0.0
    steps = 0
    model.train()
    for prices, texts, labels in loader:
        outputs = model(texts, prices, labels, adjacency)
        loss = outputs[0]
        loss.backward()
        steps += 1
        train_loss += loss.item()
        optimizer.step()
        optimizer.zero_grad()
    return train_loss / steps
