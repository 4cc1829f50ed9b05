"""Grad-CAM helper: forward/backward hooks overwrite one activation and one gradient per layer name (bounded by the number of layers)."""
import torch


class GradCAM:
    def __init__(self, model, layers):
        self.model = model
        self.acts = {}
        self.grads = {}
        for name, module in model.named_modules():
            if name in layers:
                module.register_forward_hook(self._save_act(name))
                module.register_full_backward_hook(self._save_grad(name))

    def _save_act(self, name):
        def hook(module, inputs, output):
            self.acts[name] = output.detach()
        return hook

    def _save_grad(self, name):
        def hook(module, grad_in, grad_out):
            self.grads[name] = grad_out[0].detach()
        return hook

    def __call__(self, x, cls, name):
        self.model.zero_grad()
        self.model(x)[:, cls].sum().backward()
        w = self.grads[name].mean(dim=(2, 3), keepdim=True)
        return torch.relu((w * self.acts[name]).sum(1))
