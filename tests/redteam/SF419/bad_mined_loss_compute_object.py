"""Mined (harvardnlp/annotated-transformer#14, 2018 notebook): the loss-compute object backpropagates even when it has no optimizer, and validation runs it in eval mode."""
import torch


class LossCompute:
    def __init__(self, generator, criterion, opt=None):
        self.generator, self.criterion, self.opt = generator, criterion, opt

    def __call__(self, x, y, norm):
        x = self.generator(x)
        loss = self.criterion(x.reshape(-1, x.size(-1)), y.reshape(-1)) / norm
        loss.backward()
        if self.opt is not None:
            self.opt.step()
            self.opt.zero_grad()
        return loss.item() * norm


def run_epoch(batches, model, loss_compute):
    total = 0.0
    for batch in batches:
        out = model(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        total += loss_compute(out, batch.tgt_y, batch.ntokens)
    return total


for epoch in range(10):
    model.train()
    run_epoch(train_batches, model, LossCompute(model.generator, criterion, opt))
    model.eval()
    print(run_epoch(val_batches, model, LossCompute(model.generator, criterion, None)))  # expect: SF419
