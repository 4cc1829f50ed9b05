"""AMP loop without a scaler (bf16), clip by value through a module alias."""
import torch
import torch.nn.utils as nnu


def fit(model, loader, opt, accumulation_steps=8):
    for idx, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulation_steps
        loss.backward()
        nnu.clip_grad_value_(model.parameters(), clip_value=0.5)  # expect: SF418
        if idx % accumulation_steps == accumulation_steps - 1:
            opt.step()
            opt.zero_grad(set_to_none=True)
