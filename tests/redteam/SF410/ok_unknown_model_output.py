"""Model from another module: the code does not show its output activation (not reported)."""
import torch.nn.functional as F
from mypackage.models import build_model

model = build_model("resnet18")
for x, y in loader:
    loss = F.nll_loss(model(x), y)
    loss.backward()
