"""Captioning evaluation calls the encoder on every batch after eval()."""
import torch


class Evaluator:
    def __init__(self, encoder, decoder):
        self.encoder = encoder
        self.decoder = decoder

    def run(self, loader):
        self.encoder.eval()
        captions = []
        for images in loader:
            memory = self.encoder(images)  # expect: SF106
            captions.extend(self.decoder.greedy(memory))
        return captions
