"""Mined shape: an internal train helper appends every loss tensor to a list, backpropagates each one itself, and returns only `float(sum(...))` of the list (bad)."""


def _fit_once(loader, model, optimizer, error_fn):
    collected = []
    for features, targets in loader:
        features, targets = features.float(), targets.float()
        features[features != features] = 0.0
        model.train()
        model.zero_grad()
        predictions = model(features)
        loss = error_fn(predictions, targets)
        collected.append(loss)  # expect: SF103
        loss.backward()
        optimizer.step()
    return round(float(sum(collected)) / len(collected), 6)
