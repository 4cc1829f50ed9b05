"""Mined (image classifier service): the old head's keys filtered out, the rest loaded loosely and never checked."""
import torch
import torchvision


def make_model(weights_path, device):
    net = torchvision.models.densenet121()
    net.classifier = torch.nn.Linear(net.classifier.in_features, 5)
    saved = torch.load(weights_path, map_location=device)
    kept = {k: v for k, v in saved.items() if "classifier" not in k}
    net.load_state_dict(kept, strict=False)  # expect: SF412
    net.eval()
    return net.to(device)
