"""A --seed flag is parsed but never applied to any RNG."""
import argparse

import torch
from torch.utils.data import DataLoader, RandomSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loader = DataLoader(ds, sampler=RandomSampler(ds), batch_size=8)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print("seed was", args.seed)


if __name__ == "__main__":  # expect: SF420
    main()
