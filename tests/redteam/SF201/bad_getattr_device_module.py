"""Device-agnostic loop: `getattr(torch, device_type).empty_cache()` after every optimizer step (bad, the same call spelled dynamically)."""
import torch


def fit(model, loader, optimizer, device_type="cuda"):
    model.to(device_type)
    for inputs, labels in loader:
        inputs, labels = inputs.to(device_type), labels.to(device_type)
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        getattr(torch, device_type).empty_cache()  # expect: SF201
