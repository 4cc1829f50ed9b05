"""ok called under inference mode."""
import torch


class Evaluator:
    def __init__(self, model):
        self.model = model

    def _run(self, loader):
        self.model.eval()
        return [self.model(x) for x in loader]

    def __call__(self, loader):
        with torch.inference_mode():
            return self._run(loader)
