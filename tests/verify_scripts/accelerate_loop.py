"""A hand-written training loop on Hugging Face accelerate, as a user writes it.

`Accelerator()` picks the device (the CPU here), `prepare` wraps the model, optimizer and loader,
`accelerator.backward` runs the backward pass and `accelerator.clip_grad_norm_` clips; `accelerator.accumulate` sums gradients over micro-batches and
lets the optimizer step once per `--accumulation` of them. Generated data:
`python accelerate_loop.py --steps 20` runs in seconds.
"""

import argparse

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(samples, seed):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(samples, 20, generator=generator)
    labels = (features[:, 0] * features[:, 1] > 0).long()
    return TensorDataset(features, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--accumulation", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    accelerator = Accelerator(gradient_accumulation_steps=args.accumulation)
    model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(make_data(4096, seed=0), batch_size=args.batch_size, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    history = []
    model.train()
    step = 0
    while step < args.steps:
        for features, labels in loader:
            with accelerator.accumulate(model):
                loss = nn.functional.cross_entropy(model(features), labels)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()
                optimizer.zero_grad()
            history.append(loss.item())
            if accelerator.sync_gradients:
                step += 1
                if step == args.steps:
                    break
    accelerator.print(f"trained {step} steps, last loss {history[-1]:.4f}")


if __name__ == "__main__":
    main()
