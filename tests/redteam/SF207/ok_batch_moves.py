"""Batches moved in the loop: new data every step."""
def train(model, loader, optimizer, device):
    for inputs, targets in loader:
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.cuda()
        loss = (model(inputs) - targets).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
