"""Mined shape: a Tester class (it has a constructor, so pytest never collects it) whose test() switches self.model to eval and sums self.loss over the loader with autograd on; legacy Variable(volatile=True) no longer turns it off (bad)."""
import numpy as np
import torch
from torch.autograd import Variable
from tqdm import tqdm


class Tester:
    def __init__(self, args, model, loader):
        self.args = args
        self.model = model
        self.loader = loader
        self.loss = self._build_loss()

    def _build_loss(self):
        return torch.nn.CrossEntropyLoss()

    def test(self):
        self.model.eval()
        bar = tqdm(self.loader, desc="Testing")
        total = 0
        for data, target in bar:
            if self.args.cuda:
                data, target = data.cuda(), target.cuda()
            data, target = Variable(data, volatile=True), Variable(target)
            output = self.model(data)  # expect: SF106
            total += self.loss(output, target)
        return total / len(self.loader)
