"""Each sample's prediction moved to `home`, which the script binds to `torch.device("cpu")`, on every step: one
device-to-host copy (a sync) per sample, whatever the device is called (bad)."""
import torch

home = torch.device("cpu")


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred = logits.argmax(1)
        rows = []
        for i in range(pred.shape[0]):
            rows.append(pred[i].to(home))  # expect: SF202
        print("predicted", rows)
    return loss.item()
