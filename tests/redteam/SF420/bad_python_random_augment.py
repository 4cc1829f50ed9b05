"""Python's random picks augmentations; the model is a hand-built Bilinear layer; trainer class."""
import random

import torch


class Runner:
    def __init__(self):
        self.layer = torch.nn.Bilinear(8, 8, 1)
        self.opt = torch.optim.RMSprop(self.layer.parameters())

    def epoch(self, pairs):
        random.shuffle(pairs)
        for a, b, t in pairs:
            loss = (self.layer(a, b) - t).abs().mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


if __name__ == "__main__":  # expect: SF420
    Runner().epoch(load_pairs())
