"""A `create_optimizer` factory called inside the batch loop."""
from transformers.optimization import create_optimizer


def train(model, loader, cfg):
    for batch in loader:
        optimizer = create_optimizer(model, cfg)  # expect: SF408
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
