"""The encoder of the trained model is switched to eval mode for a probe inside the loop."""
import torch
import torch.nn.functional as F


def train(model, loader, opt, probe_x):
    model.train()
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if step % 200 == 0:
            model.encoder.eval()  # expect: SF407
            with torch.no_grad():
                print(model.encoder(probe_x).norm().item())
