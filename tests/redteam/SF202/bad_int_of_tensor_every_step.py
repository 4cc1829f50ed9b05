"""`int(tensor)` on every sample of the step's batch: one pipeline drain per sample (the file spells no
other host read, so only `int(` shows it) (bad)."""
import torch


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred = logits.argmax(1)
        labels = []
        for i in range(pred.shape[0]):
            labels.append(int(pred[i]))  # expect: SF202
        print("predicted", labels)
