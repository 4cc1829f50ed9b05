"""After the step the gradients are only read for logging (per-parameter grad norms), parameters are not touched."""
import torch


def train(model, loader, optimizer, loss_fn, writer):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        if step % 50 == 0:
            with torch.no_grad():
                for name, p in model.named_parameters():
                    if p.grad is not None:
                        writer.add_scalar(f"grad_norm/{name}", p.grad.norm().item(), step)
                        writer.add_scalar(f"update_ratio/{name}", (p.grad.norm() / (p.norm() + 1e-12)).item(), step)
