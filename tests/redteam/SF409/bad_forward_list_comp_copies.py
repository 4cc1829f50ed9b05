"""Multi-target forecaster whose forward returns re-leafed copies of each target's prediction (bad)."""
from torch import nn


class MultiTargetNet(nn.Module):
    def __init__(self, backbone, n_targets):
        super().__init__()
        self.backbone = backbone
        self.n_targets = n_targets

    def forward(self, x):
        out = self.backbone(x).permute(2, 0, 1)
        prediction = [p.clone().detach().requires_grad_(True) for p in out]  # expect: SF409
        return {"prediction": prediction}
