"""Mined shape: a sparse fine-tuning mask is built from per-parameter gradient importance: the scoring function
fills a dict with `torch.zeros_like(param).to(device)` per named parameter and adds the squared (or absolute)
gradient of every sample into it; the mask builder picks the scoring function into a local by a flag, calls it
through that local and ranks the sums (bad: a model-sized sum on the accelerator across the samples)."""
import torch


def gradient_importance(model, loader, num_samples, device, reduce):
    importance = {}
    for name, param in model.named_parameters():
        importance[name] = torch.zeros_like(param).to(device)  # expect: SF105
    criterion = torch.nn.CrossEntropyLoss()
    for index, (inputs, labels) in enumerate(loader):
        if index >= num_samples:
            break
        loss = criterion(model(inputs.to(device)), labels.to(device))
        loss.backward()
        for name, param in model.named_parameters():
            importance[name] += reduce(param.grad).data
        model.zero_grad()
    return importance


def uniform_importance(model, loader, num_samples, device, reduce):
    return {name: torch.ones_like(param) for name, param in model.named_parameters()}


def build_mask(model, loader, num_samples, keep_ratio, by_gradient=True):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    if by_gradient:
        score = gradient_importance
    else:
        score = uniform_importance
    scores = score(model, loader, num_samples, device, torch.square)
    flat = torch.cat([value.view(-1) for value in scores.values()])
    keep = torch.topk(flat, int(flat.numel() * keep_ratio))[1]
    mask = torch.zeros_like(flat)
    mask[keep] = 1
    return mask
