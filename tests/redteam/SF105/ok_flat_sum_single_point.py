"""Near miss: the gradient at one point of the line is flattened once (a single pass copies the gradient; nothing is
summed across passes, legitimate)."""
import torch


class LineConnectivity:
    def __init__(self, backbone, criterion):
        self.backbone = backbone
        self.criterion = criterion

    def midpoint_gradient_norm(self, w_start, w_end, batch, set_weights):
        model = set_weights(self.backbone, (w_start + w_end) / 2)
        x, y = batch
        self.criterion(model(x), y).backward()
        grads = torch.cat([p.grad.view(-1) for p in model.parameters()])
        return grads.norm().item()
