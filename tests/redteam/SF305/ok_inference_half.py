"""An inference script: the whole model is cast to half, but nothing trains it."""
import torch

model = load_checkpoint("best.pt").cuda().half().eval()
with torch.inference_mode():
    for images in loader:
        probs = model(images.cuda().half()).softmax(-1)
        write_predictions(probs.float().cpu())
