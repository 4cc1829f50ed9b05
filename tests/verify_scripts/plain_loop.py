"""A plain training loop, as people write it: argparse, a model, a loop. `--leak` keeps every batch's
predictions (a tensor, with its autograd graph) in a list instead of the loss as a float: the classic
slow leak."""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--iters", type=int, default=200)
parser.add_argument("--leak", action="store_true")
args = parser.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
history = []
for it in range(args.iters):
    x = torch.randn(512, 16)
    y = x.sum(dim=1, keepdim=True)
    prediction = model(x)
    loss = torch.nn.functional.mse_loss(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if args.leak:
        history.append(prediction)  # keeps a tensor per step
    else:
        history.append(loss.item())
print("trained", len(history), "iterations")
