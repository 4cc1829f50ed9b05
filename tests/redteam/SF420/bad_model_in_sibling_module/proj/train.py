"""Entry: constructs the sibling module's Tagger and trains it; the only helper imported logs."""
import torch

from proj.model import Tagger
from proj.report import log_metrics


def main():
    model = Tagger(5000, 17)
    opt = torch.optim.Adam(model.parameters())
    for tokens, tags in batches:
        loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), tags.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log_metrics(loss.item())


if __name__ == "__main__":  # expect: SF420
    main()
