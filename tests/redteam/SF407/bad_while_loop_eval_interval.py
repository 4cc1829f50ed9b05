"""A step-count while loop evaluates at intervals and leaves the model in eval mode."""
import torch


def train(model, batches, opt, total_steps, eval_every, val_x):
    model.train()
    step = 0
    while step < total_steps:
        loss = model(next(batches)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            model.eval()  # expect: SF407
            with torch.no_grad():
                print(model(val_x).mean().item())
        step += 1
