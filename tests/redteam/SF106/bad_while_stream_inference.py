"""Streaming inference with a while loop over a queue after eval()."""
import torch


def serve(model, queue):
    model.eval()
    while not queue.empty():
        request = queue.get()
        scores = model(request.tensor)  # expect: SF106
        request.reply(scores.argmax(-1).item())
